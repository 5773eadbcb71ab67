import Foundation
import NIOCore
import NIOPosix
import Testing
import TetherSockets

/// `GCDAsyncSocket` through real proxies on 127.0.0.1 (microsocks, Dante, tinyproxy) to a real echo server.
@Suite(.timeLimit(.minutes(2)))
struct ProxyGCDAsyncSocketTests {
    func client(through proxy: ProxyServer, credentials: ProxyCredentials?? = nil) -> (GCDAsyncSocket, SocketRecorder) {
        let recorder = SocketRecorder()
        let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        socket.proxy = proxy.configuration(credentials: credentials)
        return (socket, recorder)
    }

    @Test(arguments: ProxyServer.Kind.allCases)
    func theDelegateSeesTheTargetAndBytesGoBothWays(kind: ProxyServer.Kind) async throws {
        let echo = try await ProxyEchoServer.start()
        let proxy = try await ProxyServer.start(kind, allowedPort: echo.port)
        defer { proxy.stop() }
        let (socket, recorder) = client(through: proxy)
        defer { socket.disconnect() }
        try socket.connect(toHost: "localhost", onPort: UInt16(echo.port), withTimeout: 10)
        // Queued while the handshake runs: sent once the tunnel is up, never to the proxy.
        socket.write(Data("hello proxy\n".utf8), withTimeout: 10, tag: 1)
        socket.readData(to: GCDAsyncSocket.lfData(), withTimeout: 10, tag: 2)
        let events = try await recorder.wait { $0.contains { if case .read = $0 { true } else { false } } }
        #expect(events.first == .connected(host: "localhost", port: UInt16(echo.port)))
        #expect(recorder.reads().first?.0 == Data("hello proxy\n".utf8))
        #expect(socket.connectedHost == "localhost")
        #expect(socket.connectedPort == UInt16(echo.port))
        #expect(recorder.violations.isEmpty)
    }

    @Test(arguments: [ProxyServer.Kind.microsocks, .dante])
    func anAddressTargetGoesThroughTheSOCKSProxy(kind: ProxyServer.Kind) async throws {
        let echo = try await ProxyEchoServer.start()
        let proxy = try await ProxyServer.start(kind)
        defer { proxy.stop() }
        let (socket, recorder) = client(through: proxy)
        defer { socket.disconnect() }
        let address = try GCDAsyncSocket.lookupHost("127.0.0.1", port: UInt16(echo.port))[0]
        try socket.connect(toAddress: address, withTimeout: 10)
        socket.write(Data("by address\n".utf8), withTimeout: 10, tag: 1)
        socket.readData(to: GCDAsyncSocket.lfData(), withTimeout: 10, tag: 2)
        let events = try await recorder.wait { $0.contains { if case .read = $0 { true } else { false } } }
        #expect(events.first == .connected(host: "127.0.0.1", port: UInt16(echo.port)))
        #expect(recorder.reads().first?.0 == Data("by address\n".utf8))
    }

    @Test(arguments: [ProxyServer.Kind.microsocks, .tinyproxy])
    func aRefusedLoginEndsTheSocketWithTheProxysReason(kind: ProxyServer.Kind) async throws {
        let echo = try await ProxyEchoServer.start()
        let proxy = try await ProxyServer.start(kind, allowedPort: echo.port)
        defer { proxy.stop() }
        let wrong = ProxyCredentials(username: "tether", password: "nope")
        // The connect and the write are issued from the socket's own event loop, so the proxy's refusal cannot end
        // the life between them (from another thread, a slow thread could issue the write after the end).
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let recorder = SocketRecorder()
        let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue, eventLoopGroup: loop)
        socket.proxy = proxy.configuration(credentials: wrong)
        try await loop.submit {
            try socket.connect(toHost: "127.0.0.1", onPort: UInt16(echo.port), withTimeout: 10)
            socket.write(Data("never sent\n".utf8), withTimeout: 10, tag: 1)
        }.get()
        let error = try #require(await recorder.waitForDisconnect())
        #expect(error.code == .other)
        #expect(error.proxyError?.code == .authenticationFailed)
        #expect(error.pendingWriteTags == [1])
        #expect(!recorder.events.contains { if case .connected = $0 { true } else { false } })
        #expect(!"\(error)".contains("nope"))
        await echo.stop()
    }

    @Test(arguments: [ProxyServer.Kind.dante, .tinyproxy])
    func startTLSThroughTheTunnelVerifiesTheTarget(kind: ProxyServer.Kind) async throws {
        let certificates = try await TLSTestCertificates.shared()
        for (certificate, succeeds) in [("server", true), ("other", false)] {
            let echo = try await ProxyEchoServer.start(tls: try certificates.server(certificate))
            let proxy = try await ProxyServer.start(kind, allowedPort: echo.port)
            defer { proxy.stop() }
            let (socket, recorder) = client(through: proxy)
            defer { socket.disconnect() }
            try socket.connect(toHost: "localhost", onPort: UInt16(echo.port), withTimeout: 10)
            socket.startTLS(try certificates.client())
            socket.write(Data("secure\n".utf8), withTimeout: 10, tag: 1)
            socket.readData(to: GCDAsyncSocket.lfData(), withTimeout: 10, tag: 2)
            if succeeds {
                let events = try await recorder.wait { $0.contains { if case .read = $0 { true } else { false } } }
                #expect(events.contains(.secured))
                #expect(recorder.reads().first?.0 == Data("secure\n".utf8))
            } else {
                let error = try #require(await recorder.waitForDisconnect())
                #expect(error.domain == .tls)
                #expect(!recorder.events.contains(.secured))
            }
            await echo.stop()
        }
    }
}
