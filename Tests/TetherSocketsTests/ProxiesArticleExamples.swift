import Foundation
import NIOCore
import Testing
import TetherSockets
import TetherTestSupport

// The snippets of the article "Proxies" (TetherSockets.docc/Proxies.md), line for line
// (`articleSnippetsAreCompiledHere` checks it), run against real proxies on 127.0.0.1.

@Suite("The article \"Proxies\": its snippets compile and run", .timeLimit(.minutes(2)))
struct ProxiesArticleExamples {
    @Test("every Swift block of the article is code of this file, line for line")
    func articleSnippetsAreCompiledHere() throws {
        let article = "Sources/TetherSockets/TetherSockets.docc/Proxies.md"
        #expect(try ArticleSnippets.checkedBlocks(ofArticle: article).count == 4)
        let missing = try ArticleSnippets.blocksMissing(
            fromArticle: article,
            inFiles: ["Tests/TetherSocketsTests/ProxiesArticleExamples.swift"]
        )
        #expect(missing.isEmpty, "not in this file:\n\(missing.joined(separator: "\n---\n"))")
    }

    @Test("the async face through SOCKS5 with a login, TLS verified for the target")
    func asyncFace() async throws {
        let certificates = try await TLSTestCertificates.shared()
        let echo = try await ProxyEchoServer.start(tls: try certificates.server())
        let server = try await ProxyServer.start(.microsocks)
        defer { server.stop() }
        let proxyPort = server.port
        let port = echo.port
        let credentials: ProxyCredentials? = ProxyServer.user
        let tls: TLSSettings? = try certificates.client()

        let proxy = ProxyConfiguration.socks5(host: "127.0.0.1", port: proxyPort, credentials: credentials)
        let connection = try await TCPConnection.connect(host: "localhost", port: port, tls: tls, proxy: proxy)

        #expect(connection.isSecure)
        try await connection.write(ByteBuffer(string: "ok\n"))
        #expect(String(buffer: try await connection.read(upTo: [0x0A], timeout: .seconds(10))) == "ok\n")
        try await connection.close()
        await echo.stop()
    }

    @Test("the GCD face through HTTP CONNECT with a login, then startTLS")
    func delegateFace() async throws {
        let certificates = try await TLSTestCertificates.shared()
        let echo = try await ProxyEchoServer.start(tls: try certificates.server())
        let server = try await ProxyServer.start(.tinyproxy, allowedPort: echo.port)
        defer { server.stop() }
        let proxyPort = server.port
        let port = UInt16(echo.port)
        let credentials: ProxyCredentials? = ProxyServer.user
        let tlsSettings: TLSSettings? = try certificates.client()
        let recorder = SocketRecorder()
        let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        defer { socket.disconnect() }

        socket.proxy = .httpConnect(host: "127.0.0.1", port: proxyPort, credentials: credentials)
        try socket.connect(toHost: "localhost", onPort: port, withTimeout: 10)
        socket.startTLS(tlsSettings)

        socket.write(Data("ok\n".utf8), withTimeout: 10, tag: 1)
        socket.readData(to: GCDAsyncSocket.lfData(), withTimeout: 10, tag: 2)
        let events = try await recorder.wait { $0.contains { if case .read = $0 { true } else { false } } }
        #expect(events.first == .connected(host: "localhost", port: port))
        #expect(events.contains(.secured))
        await echo.stop()
    }

    @Test("the environment's proxy, and NO_PROXY")
    func environment() throws {
        let port = 7000
        var environment = ["ALL_PROXY": "socks5://127.0.0.1:1080"]

        let proxy = try ProxyConfiguration.fromEnvironment(host: "localhost", port: port, environment: environment)

        #expect(proxy == .socks5(host: "127.0.0.1", port: 1080))
        environment["NO_PROXY"] = "localhost"
        #expect(try ProxyConfiguration.fromEnvironment(host: "localhost", port: port, environment: environment) == nil)
    }

    @Test("a refused login is matched by its code")
    func refusal() async throws {
        var printed: [String] = []
        func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }
        let echo = try await ProxyEchoServer.start()
        let server = try await ProxyServer.start(.microsocks)
        defer { server.stop() }
        let port = echo.port
        let wrongLogin = ProxyConfiguration.socks5(
            host: "127.0.0.1",
            port: server.port,
            credentials: ProxyCredentials(username: "tether", password: "wrong")
        )

        do {
            _ = try await TCPConnection.connect(host: "localhost", port: port, proxy: wrongLogin)
        } catch let error as GCDAsyncSocketError where error.proxyError?.code == .authenticationFailed {
            print("the proxy refused the login:", error.message)
        }

        #expect(printed.count == 1)
        #expect(printed.first?.hasPrefix("the proxy refused the login: SOCKS5 proxy 127.0.0.1:") == true)
        await echo.stop()
    }
}
