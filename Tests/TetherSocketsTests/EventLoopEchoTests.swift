import Foundation
import NIOCore
import NIOPosix
import Testing
import TetherConcurrency
import TetherTestSupport

@testable import TetherSockets

/// Two `GCDAsyncSocket`s with event-loop delivery echo small messages, each side issuing its next write and read
/// from inside `didRead`, several pairs at once so that the loops are busy: every echo comes back, in order, and
/// neither side closes.
@Suite struct EventLoopEchoTests {
    /// Both ends' delegate: the server echoes, the client checks and sends the next message.
    final class Echo: GCDAsyncSocketDelegate, @unchecked Sendable {
        // Sendable: `accepted`, `problems` and `round` are behind locks; the rest is immutable.
        let rounds: Int
        let accepted = LockedBox<[GCDAsyncSocket]>([])
        let problems = LockedBox<[String]>([])
        let round = LockedBox(0)
        let done = Latch<Void>()
        let closed = Latch<String>()

        init(rounds: Int) {
            self.rounds = rounds
        }

        static func message(_ round: Int) -> Data {
            Data((0..<16).map { UInt8(truncatingIfNeeded: round &* 16 &+ $0) })
        }

        func socket(_ sock: GCDAsyncSocket, didAcceptNewSocket newSocket: GCDAsyncSocket) {
            if MultiThreadedEventLoopGroup.currentEventLoop == nil {
                problems.withLock { $0.append("accept off a loop") }
            }
            accepted.withLock { $0.append(newSocket) }
            newSocket.readData(toLength: 16, withTimeout: 30, tag: -1)
        }

        func socket(_ sock: GCDAsyncSocket, didConnectToHost host: String, port: UInt16) {
            sock.write(Self.message(0), withTimeout: 30, tag: 0)
            sock.readData(toLength: 16, withTimeout: 30, tag: 0)
        }

        func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
            if tag == -1 {
                // The server's side: echo, read the next.
                sock.write(data, withTimeout: 30, tag: -1)
                sock.readData(toLength: 16, withTimeout: 30, tag: -1)
                return
            }
            if data != Self.message(tag) { problems.withLock { $0.append("round \(tag) echoed other bytes") } }
            let next = round.withLock { round -> Int in
                round = tag + 1
                return round
            }
            if next == rounds {
                done.set(())
                return
            }
            sock.write(Self.message(next), withTimeout: 30, tag: next)
            sock.readData(toLength: 16, withTimeout: 30, tag: next)
        }

        func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {
            closed.set("\(sock.isConnected ? "connected" : "closed") socket: \(String(describing: err))")
        }
    }

    @Test func aListenersAcceptsComeOnItsLoopOneAtATime() async throws {
        final class Accepts: GCDAsyncSocketDelegate, @unchecked Sendable {
            // Sendable: behind the lock.
            let state = LockedBox<
                (loops: Set<ObjectIdentifier>, inside: Bool, overlaps: Int, sockets: [GCDAsyncSocket])
            >(
                ([], false, 0, [])
            )
            let all = Latch<Void>()
            let expected: Int
            init(expected: Int) { self.expected = expected }

            func socket(_ sock: GCDAsyncSocket, didAcceptNewSocket newSocket: GCDAsyncSocket) {
                let loop = MultiThreadedEventLoopGroup.currentEventLoop.map { ObjectIdentifier($0) }
                state.withLock { s in
                    if s.inside { s.overlaps += 1 }
                    s.inside = true
                    if let loop { s.loops.insert(loop) }
                }
                // Long enough for an accept on another loop to arrive meanwhile, were the delegate called there.
                for _ in 0..<20_000 { _ = sock.isConnected }
                let count = state.withLock { s -> Int in
                    s.inside = false
                    s.sockets.append(newSocket)
                    return s.sockets.count
                }
                if count == expected { all.set(()) }
            }
        }
        let clients = 40
        let delegate = Accepts(expected: clients)
        let listener = GCDAsyncSocket(delegate: delegate)
        listener.callbackDelivery = .eventLoop
        try listener.accept(onInterface: "127.0.0.1", port: 0)
        let port = listener.localPort
        let peers = try await onThread { try (0..<clients).map { _ in try RawPeer.connect(port: port) } }
        try await delegate.all.wait(timeout: .seconds(20))
        let (loops, overlaps, sockets) = delegate.state.withLock { ($0.loops, $0.overlaps, $0.sockets) }
        #expect(loops.count == 1)
        #expect(overlaps == 0)
        for socket in sockets { socket.disconnect() }
        for peer in peers { peer.close() }
        listener.disconnect()
    }

    @Test func eventLoopEchoesSurviveBusyLoops() async throws {
        let pairs = 3
        let rounds = 2_000
        try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<pairs {
                group.addTask {
                    let server = Echo(rounds: rounds)
                    let listener = GCDAsyncSocket(delegate: server)
                    listener.callbackDelivery = .eventLoop
                    try listener.accept(onInterface: "127.0.0.1", port: 0)
                    let client = Echo(rounds: rounds)
                    let socket = GCDAsyncSocket(delegate: client)
                    socket.callbackDelivery = .eventLoop
                    try socket.connect(toHost: "127.0.0.1", onPort: listener.localPort, withTimeout: 5)
                    defer {
                        socket.disconnect()
                        listener.disconnect()
                        for child in server.accepted.withLock({ $0 }) { child.disconnect() }
                    }
                    do {
                        try await client.done.wait(timeout: .seconds(60))
                    } catch {
                        let ended = client.closed.value ?? server.closed.value ?? "nobody closed"
                        return "stalled at round \(client.round.withLock { $0 }): \(ended)"
                    }
                    let problems = client.problems.withLock { $0 } + server.problems.withLock { $0 }
                    if let closed = client.closed.value ?? server.closed.value { return "closed early: \(closed)" }
                    return problems.isEmpty ? nil : problems.joined(separator: "; ")
                }
            }
            var failures: [String] = []
            for try await failure in group { if let failure { failures.append(failure) } }
            #expect(failures.isEmpty, "\(failures)")
        }
    }
}
