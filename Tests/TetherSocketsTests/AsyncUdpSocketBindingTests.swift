import Foundation
import NIOCore
import Testing

@testable import TetherSockets

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// RunLoop-era bind, connect, join and broadcast (as the original's AsyncUdpSocket): synchronous, throwing, the
/// original's exceptions for misuse; and the state getters.
@Suite(.timeLimit(.minutes(1)))
struct AsyncUdpSocketBindingTests {
    static func reason(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let exception as AsyncSocketException {
            return exception.reason
        } catch {
            return "unexpected: \(error)"
        }
    }

    @Test("misuse throws AsyncSocketException with the original's reasons")
    func misuseThrowsTheOriginalsReasons() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let peer = try await UDPCollectingPeer(host: "127.0.0.1")
        let port = UInt16(peer.port)

        let bound = try await makeAsyncUdpSocket(on: home, nil)
        try bound.bind(toPort: 0)
        #expect(Self.reason { try bound.bind(toPort: 0) } == "Cannot bind a socket more than once.")

        let sent = try await makeAsyncUdpSocket(on: home, nil)
        #expect(sent.send(Data("x".utf8), toHost: "127.0.0.1", port: port, withTimeout: 5, tag: 1))
        #expect(Self.reason { try sent.bind(toPort: 0) } == "Cannot bind a socket more than once.")

        let connected = try await makeAsyncUdpSocket(on: home, nil)
        try connected.connect(toHost: "127.0.0.1", onPort: port)
        #expect(
            Self.reason { try connected.bind(toPort: 0) }
                == "Cannot bind after connecting. If needed, bind first, then connect."
        )
        #expect(
            Self.reason { try connected.connect(toHost: "127.0.0.1", onPort: port) }
                == "Cannot connect a socket more than once."
        )

        let unbound = try await makeAsyncUdpSocket(on: home, nil)
        #expect(
            Self.reason { try unbound.joinMulticastGroup("224.0.0.197") }
                == "Must bind a socket before joining a multicast group."
        )
        let boundThenConnected = try await makeAsyncUdpSocket(on: home, nil)
        try boundThenConnected.bind(toAddress: "127.0.0.1", port: 0)
        try boundThenConnected.connect(toHost: "127.0.0.1", onPort: port)
        #expect(
            Self.reason { try boundThenConnected.joinMulticastGroup("224.0.0.197") }
                == "Cannot join a multicast group if connected."
        )

        let closed = try await makeAsyncUdpSocket(on: home, nil)
        closed.close()
        #expect(Self.reason { try closed.bind(toPort: 0) } == "The socket is closed.")
        #expect(Self.reason { try closed.connect(toHost: "127.0.0.1", onPort: port) } == "The socket is closed.")
        #expect(Self.reason { try closed.joinMulticastGroup("224.0.0.197") } == "The socket is closed.")
        for socket in [bound, sent, connected, unbound, boundThenConnected] { socket.close() }
        await peer.stop()
    }

    @Test("connect is synchronous and prefers IPv4: the other family's socket is closed")
    func connectPrefersIPv4() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        #expect(socket.isIPv4() && socket.isIPv6())
        #expect(!socket.isConnected())
        #expect(socket.connectedHost() == nil && socket.connectedPort() == 0)
        try socket.connect(toHost: "localhost", onPort: 9)
        #expect(socket.isConnected())
        #expect(socket.connectedHost() == "127.0.0.1")
        #expect(socket.connectedPort() == 9)
        #expect(socket.isIPv4() && !socket.isIPv6())
        #expect(socket.localPort() != 0)
        socket.close()
        #expect(!socket.isConnected() && !socket.isIPv4())
        // connect reports nothing: the only callback is the close's.
        #expect(try await recorder.wait(for: .closed) == [.closed])
    }

    @Test("connect by sockaddr bytes; bytes of another length are a bad parameter (code 1)")
    func connectToAddressBytes() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let socket = try await makeAsyncUdpSocket(on: home, nil)
        let error = try #require(throws: AsyncUdpSocketError.self) { try socket.connect(toAddress: Data([1, 2, 3])) }
        #expect(error.code == .badParameter)
        #expect((error as NSError).localizedDescription == "remoteAddr parameter is not a valid address")
        let address = try SocketAddress(ipAddress: "::1", port: 9).sockaddrData
        #expect(address.count == 28)
        try socket.connect(toAddress: address)
        #expect(socket.connectedHost() == "::1")
        #expect(!socket.isIPv4() && socket.isIPv6())
        socket.close()
    }

    @Test("a name that does not resolve throws in kCFStreamErrorDomainNetDB with the EAI code")
    func resolutionErrors() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let socket = try await makeAsyncUdpSocket(on: home, nil)
        do {
            try socket.connect(toHost: "", onPort: 9)
            Issue.record("connect to an empty host succeeded")
        } catch {
            let nsError = error as NSError
            #expect(nsError.domain == "kCFStreamErrorDomainNetDB")
            #expect(nsError.code == Int(EAI_NONAME))
            #expect(nsError.localizedDescription == String(cString: gai_strerror(EAI_NONAME)))
        }
        #expect(!socket.isConnected() && !socket.isClosed())
        socket.close()
    }

    @Test("a bind the system refuses throws code -1 (General CFSocket error) with the POSIX error underneath")
    func bindFailureIsCodeMinusOne() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let socket = try await makeAsyncUdpSocket(on: home, nil)
        // 192.0.2.1 (TEST-NET-1) is no local address: EADDRNOTAVAIL.
        let error = try #require(throws: AsyncUdpSocketError.self) { try socket.bind(toAddress: "192.0.2.1", port: 0) }
        let nsError = error as NSError
        #expect(nsError.domain == AsyncUdpSocketErrorDomain)
        #expect(nsError.code == -1)
        #expect(nsError.localizedDescription == "General CFSocket error")
        let underlying = try #require(nsError.userInfo[NSUnderlyingErrorKey] as? NSError)
        #expect(underlying.domain == NSPOSIXErrorDomain)
        #expect(underlying.code == Int(EADDRNOTAVAIL))
        socket.close()
    }

    @Test("bind: local host and port, one family's address closes the other; initIPv4/initIPv6 keep one family")
    func bindAndFamilies() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let socket = try await makeAsyncUdpSocket(on: home, nil)
        #expect(socket.localHost() == "0.0.0.0" && socket.localPort() == 0)
        try socket.bind(toAddress: "127.0.0.1", port: 0)
        #expect(socket.localHost() == "127.0.0.1")
        #expect(socket.localPort() != 0)
        #expect(socket.isIPv4() && !socket.isIPv6())
        socket.close()
        #expect(socket.localHost() == nil && socket.localPort() == 0)

        let v4 = try await home.sync { AsyncUdpSocket(iPv4: ()) }
        #expect(v4.isIPv4() && !v4.isIPv6())
        let noV6 = try #require(throws: AsyncUdpSocketError.self) { try v4.bind(toAddress: "::1", port: 0) }
        #expect(noV6.code == .ipv6Unavailable)
        try v4.bind(toAddress: "localhost", port: 0)
        #expect(v4.localHost() == "127.0.0.1")
        v4.close()

        let v6 = try await home.sync { AsyncUdpSocket(iPv6: ()) }
        #expect(!v6.isIPv4() && v6.isIPv6())
        #expect(v6.localHost() == "::")
        let noV4 = try #require(throws: AsyncUdpSocketError.self) { try v6.connect(toHost: "127.0.0.1", onPort: 9) }
        #expect(noV4.code == .ipv4Unavailable)
        #expect((noV4 as NSError).code == 2)
        try v6.bind(toAddress: "::1", port: 0)
        #expect(v6.localHost() == "::1")
        v6.close()
    }

    @Test("maximumTransmissionUnit: 0 unbound, the loopback interface's MTU when connected over loopback")
    func maximumTransmissionUnit() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let socket = try await makeAsyncUdpSocket(on: home, nil)
        #expect(socket.maximumTransmissionUnit() == 0)
        try socket.bind(toPort: 0)
        #expect(socket.maximumTransmissionUnit() == 0)
        socket.close()
        let connected = try await makeAsyncUdpSocket(on: home, nil)
        try connected.connect(toHost: "127.0.0.1", onPort: 9)
        let text = try String(contentsOfFile: "/sys/class/net/lo/mtu", encoding: .utf8)
        let loopbackMTU = try #require(UInt32(text.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(connected.maximumTransmissionUnit() == loopbackMTU)
        connected.close()
        #expect(connected.maximumTransmissionUnit() == 0)
    }

    @Test("enableBroadcast: a broadcast to 127.255.255.255 fails (EACCES) until it is enabled, then arrives")
    func broadcast() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        let receiver = try await UDPCollectingPeer(host: "0.0.0.0")
        let port = UInt16(receiver.port)
        #expect(socket.send(Data("denied".utf8), toHost: "127.255.255.255", port: port, withTimeout: 5, tag: 1))
        try await recorder.wait { $0.count == 1 }
        #expect(recorder.events == [.notSent(tag: 1, domain: NSPOSIXErrorDomain, code: Int(EACCES))])
        try socket.enableBroadcast(true)
        #expect(socket.send(Data("to everyone".utf8), toHost: "127.255.255.255", port: port, withTimeout: 5, tag: 2))
        try await recorder.wait { $0.count == 2 }
        #expect(recorder.events.last == .sent(tag: 2))
        try await receiver.wait(for: 1)
        #expect(receiver.payloads == [Data("to everyone".utf8)])
        socket.close()
        await receiver.stop()
    }

    @Test("a member that joined a group on lo receives the group's datagrams; the other family's socket is closed")
    func multicastJoin() async throws {
        // As GCDAsyncUdpSocketMulticastTests: a link-local group, joined and sent on the loopback interface.
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let member = try await makeAsyncUdpSocket(on: home, recorder)
        try member.bind(toPort: 0)
        let mismatch = try #require(throws: AsyncUdpSocketError.self) {
            try member.joinMulticastGroup("224.0.0.197", withAddress: "::1")
        }
        #expect(mismatch.code == .badParameter)
        try member.joinMulticastGroup("224.0.0.197", withAddress: "127.0.0.1")
        #expect(member.isIPv4() && !member.isIPv6())
        member.receive(withTimeout: -1, tag: 1)

        let senderRecorder = UdpRecorder(label: "runloop-multicast-sender")
        let sender = senderRecorder.makeSocket()
        sender.setIPv6Enabled(false)
        try sender.sendIPv4Multicast(onInterface: "127.0.0.1")
        sender.send(Data("to the group".utf8), toHost: "224.0.0.197", port: member.localPort(), withTimeout: 5, tag: 1)
        try await recorder.wait(for: .received(Data("to the group".utf8), tag: 1, accepted: true))
        sender.close()
        member.close()
    }
}
