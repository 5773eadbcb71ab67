import Foundation
import NIOCore
import Testing
import TetherConcurrency

@testable import TetherSockets

#if canImport(Glibc)
import Glibc
#endif

/// A keepalive value that the kernel must refuse, and why.
struct BadLiveness: CustomStringConvertible, Sendable {
    let description: String
    let make: @Sendable () throws -> Void
}

/// The options a channel's socket holds, read back with `getsockopt` (through NIO's `getOption`).
func keepaliveOptions(of channel: any Channel) async throws -> [String: Int] {
    func option(_ level: NIOBSDSocket.OptionLevel, _ name: Int32) -> ChannelOptions.Types.SocketOption {
        ChannelOptions.Types.SocketOption(level: level, name: NIOBSDSocket.Option(rawValue: name))
    }
    return [
        "SO_KEEPALIVE": try await channel.getOption(option(.socket, SO_KEEPALIVE)).get(),
        "TCP_KEEPIDLE": try await channel.getOption(option(.tcp, TCP_KEEPIDLE)).get(),
        "TCP_KEEPINTVL": try await channel.getOption(option(.tcp, TCP_KEEPINTVL)).get(),
        "TCP_KEEPCNT": try await channel.getOption(option(.tcp, TCP_KEEPCNT)).get(),
        "TCP_USER_TIMEOUT": try await channel.getOption(option(.tcp, TCP_USER_TIMEOUT)).get(),
    ]
}

struct TCPKeepaliveTests {
    static let expected: [String: Int] = [
        "SO_KEEPALIVE": 1, "TCP_KEEPIDLE": 7, "TCP_KEEPINTVL": 3, "TCP_KEEPCNT": 4, "TCP_USER_TIMEOUT": 2_500,
    ]
    static let keepalive = try! TCPKeepalive(
        idle: .seconds(7),
        interval: .seconds(3),
        count: 4,
        userTimeout: .milliseconds(2_500)
    )

    static let badValues: [BadLiveness] = [
        .init(description: "idle 0 s") { _ = try TCPKeepalive(idle: .zero) },
        .init(description: "idle 32768 s") { _ = try TCPKeepalive(idle: .seconds(32_768)) },
        .init(description: "idle 1.5 s") { _ = try TCPKeepalive(idle: .milliseconds(1_500)) },
        .init(description: "idle −1 s") { _ = try TCPKeepalive(idle: .seconds(-1)) },
        .init(description: "interval 0 s") { _ = try TCPKeepalive(interval: .zero) },
        .init(description: "interval 40000 s") { _ = try TCPKeepalive(interval: .seconds(40_000)) },
        .init(description: "count 0") { _ = try TCPKeepalive(count: 0) },
        .init(description: "count 128") { _ = try TCPKeepalive(count: 128) },
        .init(description: "count −5") { _ = try TCPKeepalive(count: -5) },
        .init(description: "user timeout 0") { _ = try TCPKeepalive(userTimeout: .zero) },
        .init(description: "user timeout −1 ms") { _ = try TCPKeepalive(userTimeout: .milliseconds(-1)) },
        .init(description: "user timeout 0.5 ms") { _ = try TCPKeepalive(userTimeout: .microseconds(500)) },
        .init(description: "user timeout past Int32.max ms") {
            _ = try TCPKeepalive(userTimeout: .milliseconds(Int64(Int32.max) + 1))
        },
        .init(description: "user timeout of 10^15 s") { _ = try TCPKeepalive(userTimeout: .seconds(1e15)) },
        .init(description: "idle timeout 0") { _ = try IdleTimeouts(read: .zero) },
        .init(description: "write idle −1 s") { _ = try IdleTimeouts(write: .seconds(-1)) },
        .init(description: "all idle 0") { _ = try IdleTimeouts(all: .zero) },
        .init(description: "empty ping") { _ = try Heartbeat(ping: [], interval: .seconds(1), timeout: .seconds(1)) },
        .init(description: "heartbeat interval 0") {
            _ = try Heartbeat(ping: [1], interval: .zero, timeout: .seconds(1))
        },
        .init(description: "heartbeat timeout −1 s") {
            _ = try Heartbeat(ping: [1], interval: .seconds(1), timeout: .seconds(-1))
        },
    ]

    @Test(arguments: badValues)
    func aValueOutOfRangeIsABadParamError(_ bad: BadLiveness) {
        let error = #expect(throws: GCDAsyncSocketError.self) { try bad.make() }
        #expect(error?.code == .badParam)
        #expect(error?.message.isEmpty == false)
    }

    @Test func theLimitsThemselvesAreAccepted() throws {
        let low = try TCPKeepalive(idle: .seconds(1), interval: .seconds(1), count: 1, userTimeout: .milliseconds(1))
        #expect(low.isEnabled && low.idle == .seconds(1) && low.count == 1)
        let high = try TCPKeepalive(
            idle: .seconds(32_767),
            interval: .seconds(32_767),
            count: 127,
            userTimeout: .milliseconds(Int64(Int32.max))
        )
        #expect(high.userTimeout == .milliseconds(Int64(Int32.max)))
        let systemValues = try TCPKeepalive()
        #expect(systemValues.isEnabled && systemValues.idle == nil && systemValues.interval == nil)
        let userTimeoutOnly = try TCPKeepalive(userTimeout: .seconds(30))
        #expect(!userTimeoutOnly.isEnabled && userTimeoutOnly.userTimeout == .seconds(30))
    }

    @Test func theDefaultIsOffAsTheOriginals() {
        #expect(TCPKeepalive.off.isEnabled == false)
        #expect(TCPKeepalive.off.userTimeout == nil)
        #expect(GCDAsyncSocket().keepalive == .off)
        #expect(AsyncSocket().keepalive == .off)
        #expect(GCDAsyncSocket().idleTimeouts.isNone)
        #expect(GCDAsyncSocket().heartbeat == nil)
        #expect("\(TCPKeepalive.off)" == "TCPKeepalive(off)")
    }

    @Test func theOptionsSetTheGivenValuesAndLeaveTheOthersToTheSystem() throws {
        func render(_ value: TCPKeepalive) -> [String] {
            value.socketOptions.map { "\($0.level == .socket ? "socket" : "tcp") \($0.name.rawValue)=\($0.value)" }
        }
        #expect(
            render(try TCPKeepalive(idle: .seconds(5)))
                == ["socket \(SO_KEEPALIVE)=1", "tcp \(TCP_KEEPIDLE)=5", "tcp \(TCP_USER_TIMEOUT)=0"]
        )
        #expect(render(.off) == ["socket \(SO_KEEPALIVE)=0", "tcp \(TCP_USER_TIMEOUT)=0"])
    }

    // MARK: real sockets

    @Test func theGCDFaceSetsItBeforeConnectingAndOnAConnectedSocket() async throws {
        let server = try EchoServer()
        defer { server.stop() }
        let recorder = GCDLivenessRecorder()
        let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        socket.keepalive = Self.keepalive
        try socket.connect(toHost: "127.0.0.1", onPort: server.port, withTimeout: 5)
        _ = try await recorder.wait { $0.contains("connected") }
        let channel = try #require(socket.state.withLock { $0.channel })
        #expect(try await keepaliveOptions(of: channel) == Self.expected)

        socket.keepalive = try TCPKeepalive(idle: .seconds(9), interval: .seconds(2), count: 5)
        let changed = try await keepaliveOptions(of: channel)
        #expect(changed["TCP_KEEPIDLE"] == 9 && changed["TCP_KEEPINTVL"] == 2 && changed["TCP_KEEPCNT"] == 5)
        #expect(changed["TCP_USER_TIMEOUT"] == 0)
        socket.keepalive = .off
        #expect(try await keepaliveOptions(of: channel)["SO_KEEPALIVE"] == 0)
        socket.disconnect()
    }

    @Test func socketsAcceptedByTheGCDFaceStartWithTheListenersSettings() async throws {
        let recorder = GCDLivenessRecorder()
        let accepted = EventLog<GCDAsyncSocket>()
        recorder.onAccept = { accepted.append($0) }
        let listener = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        listener.keepalive = Self.keepalive
        try listener.accept(onInterface: "127.0.0.1", port: 0)
        defer { listener.disconnect() }
        let client = try await TCPConnection.connect(host: "127.0.0.1", port: Int(listener.localPort))
        let child = try #require(try await accepted.wait(timeout: .seconds(10)) { !$0.isEmpty }.first)
        #expect(child.keepalive == Self.keepalive)
        let channel = try #require(child.state.withLock { $0.channel })
        let options = try await keepaliveOptions(of: channel)
        #expect(options == Self.expected)
        child.disconnect()
        try await client.close()
    }

    @Test func theAsyncFaceSetsItWhenConnectingAndLater() async throws {
        let server = try EchoServer()
        defer { server.stop() }
        let connection = try await TCPConnection.connect(
            host: "127.0.0.1",
            port: Int(server.port),
            keepalive: Self.keepalive
        )
        #expect(try await keepaliveOptions(of: connection.channel) == Self.expected)
        try await connection.setKeepalive(try TCPKeepalive(userTimeout: .seconds(4)))
        let changed = try await keepaliveOptions(of: connection.channel)
        #expect(changed["SO_KEEPALIVE"] == 0 && changed["TCP_USER_TIMEOUT"] == 4_000)
        try await connection.close()
        let error = await #expect(throws: GCDAsyncSocketError.self) { try await connection.setKeepalive(.off) }
        #expect(error?.code == .closed)
    }

    @Test func connectionsAcceptedByAnAsyncListenerStartWithItsKeepalive() async throws {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0, keepalive: Self.keepalive)
        let client = try await TCPConnection.connect(host: "127.0.0.1", port: listener.localPort)
        var connections = listener.connections.makeAsyncIterator()
        let accepted = try #require(try await connections.next())
        #expect(try await keepaliveOptions(of: accepted.channel) == Self.expected)
        try await accepted.close()
        try await client.close()
        try await listener.close()
    }

    @Test func theRunLoopFaceSetsItBeforeConnecting() async throws {
        let server = try EchoServer()
        defer { server.stop() }
        let thread = RunLoopThread()
        defer { thread.stop() }
        let recorder = RunLoopLivenessRecorder()
        let socket = AsyncSocket(delegate: recorder)
        socket.keepalive = Self.keepalive
        try await thread.sync { try socket.connect(toHost: "127.0.0.1", onPort: server.port, withTimeout: 5) }
        _ = try await recorder.wait { $0.contains("connected") }
        let channel = try #require(socket.currentCore?.state.withLock { $0.channel })
        #expect(try await keepaliveOptions(of: channel) == Self.expected)
        try await thread.sync { socket.disconnect() }
    }
}
