import Dispatch
import Foundation
import NIOCore
import Testing
import TetherSockets

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite(.timeLimit(.minutes(1)))
struct GCDAsyncUdpSocketConfigurationTests {
    private func expectCode(
        _ code: GCDAsyncUdpSocketError.Code,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () throws -> Void
    ) {
        do {
            try body()
            Issue.record("expected \(code), nothing thrown", sourceLocation: sourceLocation)
        } catch let error as GCDAsyncUdpSocketError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("bad configurations throw badConfig")
    func badConfigurationsThrow() throws {
        let recorder = UdpRecorder(label: "config")
        let socket = recorder.makeSocket()
        expectCode(.badConfig) { try socket.receiveOnce() }
        expectCode(.badConfig) { try socket.beginReceiving() }
        expectCode(.badConfig) { try socket.joinMulticastGroup("239.1.2.3") }

        let orphan = GCDAsyncUdpSocket()
        expectCode(.badConfig) { try orphan.bind(toPort: 0) }
        let noQueue = GCDAsyncUdpSocket(delegate: recorder)
        expectCode(.badConfig) { try noQueue.connect(toHost: "127.0.0.1", onPort: 9) }

        let disabled = recorder.makeSocket()
        disabled.setIPv4Enabled(false)
        disabled.setIPv6Enabled(false)
        expectCode(.badConfig) { try disabled.bind(toPort: 0) }

        try socket.bind(toPort: 0, interface: "127.0.0.1")
        expectCode(.badConfig) { try socket.bind(toPort: 0) }
        socket.close()

        let connected = recorder.makeSocket()
        try connected.connect(toHost: "127.0.0.1", onPort: 9)
        expectCode(.badConfig) { try connected.connect(toHost: "127.0.0.1", onPort: 9) }
        expectCode(.badConfig) { try connected.bind(toPort: 0) }
        expectCode(.badConfig) { try connected.joinMulticastGroup("239.1.2.3") }
        connected.close()
    }

    @Test("bad parameters throw badParam")
    func badParametersThrow() throws {
        let recorder = UdpRecorder(label: "params")
        let socket = recorder.makeSocket()
        expectCode(.badParam) { try socket.bind(toPort: 0, interface: "no-such-interface0") }
        expectCode(.badParam) { try socket.bind(toAddress: Data([1, 2, 3])) }
        expectCode(.badParam) { try socket.connect(toHost: "", onPort: 9) }
        expectCode(.badParam) { try socket.connect(toAddress: Data()) }
        try socket.bind(toPort: 0, interface: "127.0.0.1")
        expectCode(.badParam) { try socket.joinMulticastGroup("not-a-group") }
        expectCode(.badParam) { try socket.joinMulticastGroup("239.1.2.3", onInterface: "no-such-interface0") }
        // The IPv6 socket was closed by binding to an IPv4 interface: an IPv6 group has no matching socket.
        expectCode(.badParam) { try socket.joinMulticastGroup("ff02::1") }
        socket.close()
    }

    @Test("binding a port in use fails with the POSIX error; port reuse lets two sockets share it")
    func portInUseAndReuse() throws {
        let recorder = UdpRecorder(label: "reuse")
        // A plain socket without SO_REUSEADDR holds the port.
        #if canImport(Glibc)
        let holder = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        #else
        let holder = socket(AF_INET, SOCK_DGRAM, 0)
        #endif
        defer { _ = close(holder) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(holder, generic, length) == 0 && getsockname(holder, generic, &length) == 0
            }
        }
        try #require(bound)
        let port = UInt16(bigEndian: address.sin_port)
        let second = recorder.makeSocket()
        do {
            try second.bind(toPort: port, interface: "127.0.0.1")
            Issue.record("second bind succeeded")
        } catch let error as GCDAsyncUdpSocketError {
            #expect(error.code == .other)
            #expect(error.domain == .posix)
            #expect(error.posixErrorCode == .EADDRINUSE)
        }
        #expect(second.isClosed())

        let a = recorder.makeSocket()
        let b = recorder.makeSocket()
        try a.enableReusePort(true)
        try b.enableReusePort(true)
        try a.bind(toPort: 0, interface: "127.0.0.1")
        try b.bind(toPort: a.localPort(), interface: "127.0.0.1")
        #expect(a.localPort() == b.localPort())
        a.close()
        b.close()
    }

    /// The direct-send path keeps a duplicate of the socket's descriptor; without close-on-exec, a process started
    /// while the socket is open would inherit it and keep the port bound after `close()`.
    @Test("every descriptor of a bound socket is close-on-exec, the direct-send duplicate too")
    func descriptorsAreCloseOnExec() async throws {
        let recorder = UdpRecorder(label: "cloexec")
        let socket = recorder.makeSocket()
        socket.setIPv6Enabled(false)
        // An address of 127/8 that no other test uses: another socket may share the port (port reuse) on 127.0.0.1.
        let host = "127.\(UInt8.random(in: 1...254)).\(UInt8.random(in: 1...254)).\(UInt8.random(in: 1...254))"
        try socket.bind(toPort: 0, interface: host)
        let port = socket.localPort()
        let hostAddress = inet_addr(host)
        // A send lets the life adopt its descriptor (and make the duplicate).
        socket.send(Data("x".utf8), toHost: host, port: port, withTimeout: 5, tag: 1)
        try await recorder.waitForSendResults([1])
        var found: [(fd: Int32, closeOnExec: Bool)] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            guard let fd = Int32(name) else { continue }
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
            }
            var type: Int32 = 0
            var typeLength = socklen_t(MemoryLayout<Int32>.size)
            guard named, address.sin_family == sa_family_t(AF_INET), UInt16(bigEndian: address.sin_port) == port,
                address.sin_addr.s_addr == hostAddress, getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &typeLength) == 0,
                type == Int32(SOCK_DGRAM.rawValue)
            else { continue }
            found.append((fd, fcntl(fd, F_GETFD) & FD_CLOEXEC != 0))
        }
        socket.close()
        #expect(found.count == 2, "the channel's descriptor and the direct-send duplicate: \(found)")
        #expect(found.allSatisfy { $0.closeOnExec }, "\(found)")
    }

    @Test("diagnostics and configuration read back what was set")
    func diagnostics() throws {
        let recorder = UdpRecorder(label: "diagnostics")
        let socket = recorder.makeSocket()
        #expect(socket.isClosed())
        #expect(socket.isIPv4() && socket.isIPv6())
        #expect(socket.isIPVersionNeutral())
        socket.setPreferIPv4()
        #expect(socket.isIPv4Preferred() && !socket.isIPVersionNeutral())
        socket.setIPVersionNeutral()
        #expect(socket.maxSendBufferSize() == 65_535)
        socket.setMaxSendBufferSize(32_768)
        #expect(socket.maxSendBufferSize() == 32_768)
        socket.setUserData("mine")
        #expect(socket.userData() as? String == "mine")
        try socket.bind(toPort: 0)
        #expect(!socket.isClosed())
        #expect(socket.isIPv4() && socket.isIPv6())
        #expect(socket.localPort_IPv4() != 0 && socket.localPort_IPv6() != 0)
        #expect(socket.localHost_IPv4() == "0.0.0.0")
        #expect(socket.localHost_IPv6() == "::")
        #expect(socket.localPort() == socket.localPort_IPv4())
        #expect(!socket.isConnected())
        #expect(socket.connectedAddress() == nil && socket.connectedPort() == 0)
        let address = try #require(socket.localAddress_IPv6())
        #expect(GCDAsyncUdpSocket.isIPv6Address(address))
        #expect(GCDAsyncUdpSocket.family(fromAddress: Data([0])) == AF_UNSPEC)
        #expect(GCDAsyncUdpSocket.host(fromAddress: Data([0])) == nil)
        socket.close()
        #expect(socket.isClosed())
        #expect(socket.localPort() == 0)

        let v6Only = recorder.makeSocket()
        v6Only.setIPv4Enabled(false)
        try v6Only.bind(toPort: 0, interface: "::1")
        #expect(!v6Only.isIPv4() && v6Only.isIPv6())
        #expect(v6Only.localHost() == "::1")
        v6Only.close()
    }

    @Test("the error bridges to the original NSError domain and codes")
    func errorBridging() {
        let error = GCDAsyncUdpSocketError(code: .sendTimeout, message: "Send operation timed out")
        let bridged = error as NSError
        #expect(bridged.domain == "GCDAsyncUdpSocketErrorDomain")
        #expect(bridged.code == 3)
        #expect(bridged.localizedDescription == "Send operation timed out")
        #expect(GCDAsyncUdpSocketError.Code.other.rawValue == 5)
        #expect(GCDAsyncUdpSocketError.Code.closed.rawValue == 4)
        #expect(GCDAsyncUdpSocketError.Code.badParam.description == "badParam")
        let posix = GCDAsyncUdpSocketError(
            code: .other,
            domain: .posix,
            message: "Error in send() function",
            underlying: POSIXError(.EMSGSIZE)
        )
        #expect(posix.posixErrorCode == .EMSGSIZE)
        #expect(error.posixErrorCode == nil)
        do {
            throw error
        } catch GCDAsyncUdpSocketError.Code.sendTimeout {
            // matched by code
        } catch {
            Issue.record("not matched by code: \(error)")
        }
    }
}
