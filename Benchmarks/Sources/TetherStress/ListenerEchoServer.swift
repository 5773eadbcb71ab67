import NIOCore
import TetherCore
import TetherSockets

/// The echo server on the async face: a `TCPListener` (with TLS when given) whose connections each run a task that
/// iterates `frames(STXFrameCodec())` and writes every frame back.
final class ListenerEchoServer: Sendable {
    let listener: TCPListener
    let port: Int

    private init(listener: TCPListener) {
        self.listener = listener
        self.port = listener.localPort
    }

    static func start(tls: TLSSettings?, counters: ServerCounters) async throws -> ListenerEchoServer {
        let listener = try await TCPListener.bind(
            host: "127.0.0.1",
            port: 0,
            tls: tls,
            backlog: 4096,
            maxPendingConnections: 1024
        )
        Task {
            do {
                for try await connection in listener.connections {
                    counters.add("accepted")
                    Task { await echo(connection, counters: counters) }
                }
            } catch {
                counters.add("listener_errors")
            }
        }
        return ListenerEchoServer(listener: listener)
    }

    static func echo(_ connection: TCPConnection, counters: ServerCounters) async {
        do {
            for try await frame in connection.frames(StressFrame.codec) {
                try await connection.write(frame, using: StressFrame.codec)
                counters.add("frames")
            }
        } catch let error as FramingError {
            _ = error
            counters.add("corrupted")
        } catch {
            if (error as? GCDAsyncSocketError)?.code != .closed { counters.add("errors") }
        }
        counters.add("closed")
        try? await connection.close()
    }
}
