import Foundation
import Testing
import TetherSockets

/// The RunLoop-era `AsyncSocket` through real proxies on 127.0.0.1 to a real echo server.
@Suite(.timeLimit(.minutes(2)))
struct ProxyAsyncSocketTests {
    @Test(arguments: ProxyServer.Kind.allCases)
    func theDelegateSeesTheTargetAndBytesGoBothWays(kind: ProxyServer.Kind) async throws {
        let echo = try await ProxyEchoServer.start()
        let proxy = try await ProxyServer.start(kind, allowedPort: echo.port)
        defer { proxy.stop() }
        let home = RunLoopThread(name: "proxy-client")
        let recorder = RunLoopSocketRecorder()
        recorder.expectedRunLoop = home.runLoop
        let socket = AsyncSocket(delegate: recorder)
        socket.proxy = proxy.configuration()
        defer {
            socket.disconnect()
            home.stop()
        }
        let port = UInt16(echo.port)
        try await home.sync {
            try socket.connect(toHost: "localhost", onPort: port, withTimeout: 10)
            socket.write(Data("run loop\n".utf8), withTimeout: 10, tag: 1)
            socket.readData(to: AsyncSocket.lfData(), withTimeout: 10, tag: 2)
        }
        let events = try await recorder.wait { $0.contains(.read(Data("run loop\n".utf8), tag: 2)) }
        #expect(events.contains(.connected(host: "localhost", port: port)))
        #expect(socket.connectedHost() == "localhost")
        #expect(recorder.violations.isEmpty)
        await echo.stop()
    }

    @Test(arguments: [ProxyServer.Kind.microsocks, .tinyproxy])
    func aRefusedLoginIsReportedWithTheProxyErrorUnderneath(kind: ProxyServer.Kind) async throws {
        let echo = try await ProxyEchoServer.start()
        let proxy = try await ProxyServer.start(kind, allowedPort: echo.port)
        defer { proxy.stop() }
        let home = RunLoopThread(name: "proxy-client")
        let recorder = RunLoopSocketRecorder()
        let socket = AsyncSocket(delegate: recorder)
        socket.proxy = proxy.configuration(credentials: ProxyCredentials(username: "tether", password: "nope"))
        defer { home.stop() }
        let port = UInt16(echo.port)
        try await home.sync { try socket.connect(toHost: "127.0.0.1", onPort: port, withTimeout: 10) }
        let events = try await recorder.waitForDisconnect()
        #expect(events.suffix(2) == [.willDisconnect(domain: AsyncSocketErrorDomain, code: -1), .disconnected])
        let error = try #require(recorder.errors.compactMap { $0 as? AsyncSocketError }.last)
        #expect((error.underlying as? GCDAsyncSocketError)?.proxyError?.code == .authenticationFailed)
        await echo.stop()
    }
}
