import NIOCore
import TetherCore
import TetherSockets

/// TCP clients on the async face (`TCPConnection`): connected in batches, then each runs a ping-pong of STX frames
/// (one frame in flight) until the run stops, checking every echo.
enum AsyncFaceClients {
    /// Connects `count` clients, `batch` at a time (each batch concurrently); failed connects are counted in
    /// `control` and leave no connection.
    static func connect(
        count: Int,
        port: Int,
        tls: TLSSettings?,
        batch: Int,
        control: RunControl
    ) async -> [TCPConnection] {
        var connections: [TCPConnection] = []
        connections.reserveCapacity(count)
        var start = 0
        while start < count {
            let end = min(start + batch, count)
            await withTaskGroup(of: TCPConnection?.self) { group in
                for _ in start..<end {
                    group.addTask {
                        do {
                            return try await TCPConnection.connect(
                                host: "127.0.0.1",
                                port: port,
                                timeout: .seconds(30),
                                tls: tls
                            )
                        } catch {
                            control.connectFailed("\(error)")
                            return nil
                        }
                    }
                }
                for await connection in group {
                    if let connection { connections.append(connection) }
                }
            }
            start = end
        }
        return connections
    }

    /// Ping-pong on `connection` until `control` stops (or `frameLimit` frames); the life's account goes to
    /// `control`. Returns whether the life ended cleanly.
    @discardableResult
    static func exchange(
        id: UInt32,
        connection: TCPConnection,
        control: RunControl,
        frameLimit: Int? = nil
    ) async -> Bool {
        var tally = SequenceTally()
        var sent = 0
        var failure: String?
        var iterator = connection.frames(StressFrame.codec).makeAsyncIterator()
        do {
            while !control.isStopped, frameLimit.map({ sent < $0 }) ?? true {
                let frame = StressFrame.encoded(
                    connection: id,
                    sequence: UInt64(sent),
                    sentAt: ProcessProbe.nanoseconds()
                )
                try await connection.write(frame, timeout: .seconds(30))
                sent += 1
                guard let echo = try await iterator.next() else { throw StressError("closed by the server") }
                guard let checked = StressFrame.check(echo, connection: id) else {
                    tally.corrupted += 1
                    continue
                }
                tally.record(checked.sequence)
                control.histogram.record(ProcessProbe.nanoseconds() &- checked.sentAt, shard: Int(id))
            }
        } catch let error as FramingError {
            tally.corrupted += 1
            failure = "\(error)"
        } catch {
            failure = "\(error)"
        }
        control.finish(sent: sent, tally: tally, error: failure)
        return failure == nil
    }

    /// The soak's client: connect, exchange `framesPerLife` frames, close, again, until `control` stops.
    static func churn(id: UInt32, port: Int, tls: TLSSettings?, control: RunControl, framesPerLife: Int) async {
        while !control.isStopped {
            let connection: TCPConnection
            do {
                connection = try await TCPConnection.connect(
                    host: "127.0.0.1",
                    port: port,
                    timeout: .seconds(30),
                    tls: tls
                )
            } catch {
                control.connectFailed("\(error)")
                try? await Task.sleep(for: .milliseconds(100))
                continue
            }
            await exchange(id: id, connection: connection, control: control, frameLimit: framesPerLife)
            try? await connection.close()
        }
    }
}
