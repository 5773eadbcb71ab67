import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import TetherSockets

#if canImport(Glibc)
import Glibc
#endif

/// The descriptors of this process that are TCP sockets with `host` (an IPv4 address no other test uses) at either
/// end, read from `/proc/self/fd`.
func socketDescriptors(on host: String) -> Int {
    let wanted = inet_addr(host)
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return names.compactMap(Int32.init).filter { fd in
        var type: Int32 = 0
        var typeLength = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &typeLength) == 0, type == Int32(SOCK_STREAM.rawValue)
        else { return false }
        for ends in [getsockname, getpeername] {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { ends(fd, $0, &length) == 0 }
            }
            if named, address.sin_family == sa_family_t(AF_INET), address.sin_addr.s_addr == wanted { return true }
        }
        return false
    }.count
}

extension RawPeer {
    /// Whether the next `recv` sees the end of the stream (0) within 10 s, rather than bytes, an error or nothing.
    func readsEndOfStream() -> Bool {
        // (A `timeval` laid out by hand, two `long`s on Linux: its imported initializers are not visible in every
        // compilation batch of this module.)
        let timeout: [Int] = [10, 0]
        _ = timeout.withUnsafeBytes { setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, $0.baseAddress, socklen_t($0.count)) }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0) == 0
    }
}

/// An address of 127/8 that no other test uses.
func privateLoopbackHost() -> String {
    "127.\(UInt8.random(in: 1...254)).\(UInt8.random(in: 1...254)).\(UInt8.random(in: 2...254))"
}

/// A listener's delegate that keeps the accepted sockets only when told to.
final class AcceptingDelegate: AsyncSocketDelegate, @unchecked Sendable {
    // Sendable: every mutable member is behind `lock`.
    private let lock = NIOLock()
    private let keeps: Bool
    private var kept: [AsyncSocket] = []
    private let log = EventLog<RunLoopEvent>()

    init(keeps: Bool) {
        self.keeps = keeps
    }

    var events: [RunLoopEvent] { log.events }

    func wait(until condition: @escaping @Sendable ([RunLoopEvent]) -> Bool) async throws {
        try await log.wait(timeout: .seconds(10), until: condition)
    }

    func dropAccepted() {
        lock.withLock { kept = [] }
    }

    func onSocket(_ sock: AsyncSocket, didAcceptNewSocket newSocket: AsyncSocket) {
        if keeps { lock.withLock { kept.append(newSocket) } }
        log.append(.accepted)
    }

    func onSocket(_ sock: AsyncSocket, didConnectToHost host: String, port: UInt16) {
        log.append(.connected(host: host, port: port))
    }

    func onSocketDidDisconnect(_ sock: AsyncSocket) {
        log.append(.disconnected)
    }
}

@Suite("AsyncSocket (RunLoop era): the peer's close with bytes unread, and sockets released", .timeLimit(.minutes(1)))
struct AsyncSocketLifetimeTests {
    @Test("the peer sends, then closes, while no read is pending: willDisconnect(nil) with the bytes, didDisconnect")
    func aPeerCloseWithNoReadPendingIsReportedWithTheUnreadBytes() async throws {
        let client = try await RunLoopClient.connect()
        defer { client.close() }
        client.peer.send("leftover")
        client.peer.shutdownWrite()
        let events = try await client.recorder.waitForDisconnect()
        #expect(events.suffix(2) == [.willDisconnect(domain: nil, code: nil), .disconnected])
        #expect(client.recorder.unreadSeen == [Data("leftover".utf8)])
        #expect(!client.socket.isConnected())
        #expect(client.recorder.violations.isEmpty)
    }

    @Test("reads served before the peer's close keep their bytes; the rest comes as unreadData")
    func readsBeforeThePeerCloseKeepTheirBytes() async throws {
        let client = try await RunLoopClient.connect()
        defer { client.close() }
        client.socket.readData(toLength: 2, withTimeout: -1, tag: 1)
        client.peer.send("ab-rest")
        client.peer.close()
        let events = try await client.recorder.waitForDisconnect()
        #expect(events.contains(.read(Data("ab".utf8), tag: 1)))
        #expect(events.suffix(2) == [.willDisconnect(domain: nil, code: nil), .disconnected])
        #expect(client.recorder.unreadSeen == [Data("-rest".utf8)])
    }

    @Test("50 connected sockets, both sides, released without disconnect: every descriptor is given back")
    func releasedSocketsGiveBackTheirDescriptors() async throws {
        let host = privateLoopbackHost()
        let home = RunLoopThread(name: "lifetime")
        defer { home.stop() }
        let server = AcceptingDelegate(keeps: true)
        let listener = AsyncSocket(delegate: server)
        try await home.sync { try listener.accept(onInterface: host, port: 0) }
        let port = listener.localPort()
        #expect(socketDescriptors(on: host) == 1)
        let clientDelegate = RunLoopSocketRecorder()
        // The only strong references to the clients are in this box.
        let clients = NIOLockedValueBox<[AsyncSocket]>((0..<50).map { _ in AsyncSocket(delegate: clientDelegate) })
        try await home.sync {
            try clients.withLockedValue { sockets in
                for socket in sockets { try socket.connect(toHost: host, onPort: port, withTimeout: 5) }
            }
        }
        try await clientDelegate.wait { $0.filter { if case .connected = $0 { true } else { false } }.count == 50 }
        try await server.wait { $0.filter { if case .connected = $0 { true } else { false } }.count == 50 }
        #expect(socketDescriptors(on: host) == 101)
        clients.withLockedValue { $0 = [] }
        server.dropAccepted()
        try await waitUntil("the released sockets' descriptors are closed") { socketDescriptors(on: host) == 1 }
        #expect(!clientDelegate.events.contains(.disconnected))
        listener.disconnect()
    }

    @Test("an accepted socket the delegate does not keep closes: the peer reads the end of the stream")
    func anAcceptedSocketNobodyKeepsCloses() async throws {
        let host = privateLoopbackHost()
        let home = RunLoopThread(name: "lifetime-unkept")
        defer { home.stop() }
        let server = AcceptingDelegate(keeps: false)
        let listener = AsyncSocket(delegate: server)
        try await home.sync { try listener.accept(onInterface: host, port: 0) }
        defer { listener.disconnect() }
        let peer = try RawPeer.connect(port: listener.localPort(), host: host)
        defer { peer.close() }
        try await server.wait { $0.contains(.accepted) }
        // The accepted socket can be released on the event loop while its accept is delivered there; the engine is
        // in the pipeline by then, so the close reaches the channel.
        #expect(try await onThread { peer.readsEndOfStream() })
        try await waitUntil("only the listener and the peer are left") { socketDescriptors(on: host) == 2 }
    }
}
