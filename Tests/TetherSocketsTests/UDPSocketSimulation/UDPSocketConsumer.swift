import Foundation
import NIOCore
import TetherConcurrency
import TetherSockets

/// The single consumer of a ``UDPSocket``'s ``UDPSocket/datagrams``: takes datagrams only as the schedule grants them
/// (so datagrams wait in the socket's buffer and the kernel's, as with a slow consumer), records them, and records
/// how the sequence ended. It holds the iterator, never the socket: dropping the socket's last reference is possible.
final class UDPSocketConsumer: Sendable {
    enum End: Equatable {
        case finished
        case threw(String)
    }

    private let log = EventLog<Data>()
    private let ending = LockedBox<End?>(nil)
    private let grants: AsyncStream<Int>.Continuation
    private let task: Task<Void, Never>

    var received: [Data] { log.events }
    var end: End? { ending.withLock { $0 } }

    init(_ socket: UDPSocket) {
        // Sendable: the iterator is used by the consumer task only.
        let iterator = UncheckedSendableBox(socket.datagrams.makeAsyncIterator())
        let (stream, grants) = AsyncStream.makeStream(of: Int.self)
        self.grants = grants
        let (log, ending) = (self.log, self.ending)
        task = Task {
            var datagrams = iterator.value
            var allowed = 0
            var granted = stream.makeAsyncIterator()
            while true {
                while allowed == 0 {
                    guard let more = await granted.next() else { return }
                    allowed += more
                }
                do {
                    guard let datagram = try await datagrams.next() else {
                        ending.withLock { $0 = .finished }
                        return
                    }
                    allowed -= 1
                    log.append(Data(datagram.data.readableBytesView))
                } catch {
                    ending.withLock { $0 = .threw("\(error)") }
                    return
                }
            }
        }
    }

    /// Lets the consumer take `count` more datagrams.
    func grant(_ count: Int) {
        grants.yield(count)
    }

    /// Waits (bounded) until `condition` holds for the datagrams received; false if it never did.
    func wait(until condition: @escaping @Sendable ([Data]) -> Bool) async -> Bool {
        (try? await log.wait(timeout: .seconds(10), until: condition)) != nil
    }

    /// Waits (bounded) until the sequence ended; the end, or nil if it never did.
    func waitForEnd() async -> End? {
        grant(1 << 30)
        _ = await eventually { self.end != nil }
        return end
    }

    /// Stops the consumer task.
    func stop() async {
        grants.finish()
        task.cancel()
        await task.value
    }
}
