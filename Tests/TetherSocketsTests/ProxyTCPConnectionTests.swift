import NIOCore
import Testing
import TetherSockets

/// `TCPConnection` through real proxies on 127.0.0.1 (microsocks, Dante, tinyproxy) to a real echo server.
@Suite(.timeLimit(.minutes(2)))
struct ProxyTCPConnectionTests {
    /// Writes a line and expects it back.
    func expectEcho(_ connection: TCPConnection, _ text: String = "through the tunnel\n") async throws {
        try await connection.write(ByteBuffer(string: text))
        let echoed = try await connection.read(upTo: [0x0A], maxLength: 200_000, timeout: .seconds(10))
        #expect(String(buffer: echoed) == text)
    }

    /// The proxy error behind what `body` threw; records an issue when it threw something else or nothing.
    func proxyError(_ body: () async throws -> Void) async -> ProxyError? {
        do {
            try await body()
            Issue.record("expected the proxy to refuse")
        } catch let error as GCDAsyncSocketError {
            #expect(error.code == .other)
            if let refusal = error.proxyError { return refusal }
            Issue.record("not a proxy error: \(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
        return nil
    }

    @Test(arguments: ProxyServer.Kind.allCases)
    func aConnectionThroughTheProxyCarriesBytesBothWays(kind: ProxyServer.Kind) async throws {
        let echo = try await ProxyEchoServer.start()
        let proxy = try await ProxyServer.start(kind, allowedPort: echo.port)
        defer { proxy.stop() }
        for host in ["127.0.0.1", "localhost"] {
            let connection = try await TCPConnection.connect(
                host: host,
                port: echo.port,
                proxy: proxy.configuration()
            )
            #expect(connection.remoteAddress.port == proxy.port)
            try await expectEcho(connection)
            try await expectEcho(connection, String(repeating: "x", count: 100_000) + "\n")
            try await connection.close()
        }
        await echo.stop()
    }

    // Dante here has only an IPv4 external address, and refuses IPv6 targets (reply 8).
    @Test(arguments: [ProxyServer.Kind.microsocks])
    func anIPv6TargetGoesThroughTheSOCKSProxyAsAnAddress(kind: ProxyServer.Kind) async throws {
        let echo = try await ProxyEchoServer.start()
        #expect(echo.listeners.count == 2, "no IPv6 loopback here")
        let proxy = try await ProxyServer.start(kind)
        defer { proxy.stop() }
        let connection = try await TCPConnection.connect(host: "::1", port: echo.port, proxy: proxy.configuration())
        try await expectEcho(connection)
        try await connection.close()
        await echo.stop()
    }

    @Test(arguments: [ProxyServer.Kind.microsocks, .tinyproxy])
    func aWrongPasswordFailsAsAuthenticationFailed(kind: ProxyServer.Kind) async throws {
        let echo = try await ProxyEchoServer.start()
        let proxy = try await ProxyServer.start(kind, allowedPort: echo.port)
        defer { proxy.stop() }
        let wrong = ProxyCredentials(username: ProxyServer.user.username, password: "wrong-password")
        let refusal = await proxyError {
            _ = try await TCPConnection.connect(
                host: "127.0.0.1",
                port: echo.port,
                proxy: proxy.configuration(credentials: wrong)
            )
        }
        #expect(refusal?.code == .authenticationFailed)
        #expect(refusal?.message.contains("wrong-password") == false)
        if kind == .tinyproxy {
            // tinyproxy answers a wrong password with 401 (407 when none is sent).
            #expect(refusal?.replyCode == 401)
            #expect(refusal?.reason == "Unauthorized")
        }
        await echo.stop()
    }

    @Test(arguments: [ProxyServer.Kind.microsocks, .tinyproxy])
    func noCredentialsFailAsAuthenticationRequired(kind: ProxyServer.Kind) async throws {
        let echo = try await ProxyEchoServer.start()
        let proxy = try await ProxyServer.start(kind, allowedPort: echo.port)
        defer { proxy.stop() }
        let refusal = await proxyError {
            _ = try await TCPConnection.connect(
                host: "127.0.0.1",
                port: echo.port,
                proxy: proxy.configuration(credentials: .some(nil))
            )
        }
        #expect(refusal?.code == .authenticationRequired)
        await echo.stop()
    }

    @Test(arguments: [
        (ProxyServer.Kind.dante, ProxyError.Code.connectionNotAllowed, 2),
        (.microsocks, .connectionRefused, 5),
        (.tinyproxy, .httpStatus, 403),
    ])
    func aTargetTheProxyRefusesFailsWithTheProxysCode(
        kind: ProxyServer.Kind,
        code: ProxyError.Code,
        reply: Int
    )
        async throws
    {
        let echo = try await ProxyEchoServer.start()
        // Dante refuses this port by rule, tinyproxy allows only the echo port, and nothing listens on it.
        let refusedPort = try ProxyServer.freePort()
        let proxy = try await ProxyServer.start(kind, allowedPort: echo.port, refusedPort: refusedPort)
        defer { proxy.stop() }
        let refusal = await proxyError {
            _ = try await TCPConnection.connect(host: "127.0.0.1", port: refusedPort, proxy: proxy.configuration())
        }
        #expect(refusal?.code == code)
        #expect(refusal?.replyCode == reply)
        await echo.stop()
    }

    @Test func aProxyThatNeverAnswersEndsInAConnectTimeout() async throws {
        // Accepts and stays silent: the handshake never completes, and the connect timeout ends it.
        let silent = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let held = Task { () -> [TCPConnection] in
            var connections: [TCPConnection] = []
            for try await connection in silent.connections { connections.append(connection) }
            return connections
        }
        for proxy in [
            ProxyConfiguration.socks5(host: "127.0.0.1", port: silent.localPort),
            .httpConnect(host: "127.0.0.1", port: silent.localPort),
        ] {
            do {
                _ = try await TCPConnection.connect(
                    host: "example.com",
                    port: 443,
                    timeout: .milliseconds(200),
                    proxy: proxy
                )
                Issue.record("expected a timeout")
            } catch let error as GCDAsyncSocketError {
                #expect(error.code == .connectTimeout)
            }
        }
        try await silent.close()
        _ = try await held.value
    }

    @Test(arguments: ProxyServer.Kind.allCases)
    func tlsThroughTheTunnelVerifiesTheTargetsName(kind: ProxyServer.Kind) async throws {
        let certificates = try await TLSTestCertificates.shared()
        let echo = try await ProxyEchoServer.start(tls: try certificates.server())
        let proxy = try await ProxyServer.start(kind, allowedPort: echo.port)
        defer { proxy.stop() }
        let connection = try await TCPConnection.connect(
            host: "localhost",
            port: echo.port,
            tls: try certificates.client(),
            proxy: proxy.configuration()
        )
        #expect(connection.isSecure)
        try await expectEcho(connection)
        try await connection.close()
        await echo.stop()
    }

    @Test(arguments: ProxyServer.Kind.allCases)
    func tlsThroughTheTunnelRefusesACertificateForAnotherName(kind: ProxyServer.Kind) async throws {
        let certificates = try await TLSTestCertificates.shared()
        // Signed by the trusted CA, for other.example: only a check of the target's name ("localhost") refuses it.
        let echo = try await ProxyEchoServer.start(tls: try certificates.server("other"))
        let proxy = try await ProxyServer.start(kind, allowedPort: echo.port)
        defer { proxy.stop() }
        do {
            _ = try await TCPConnection.connect(
                host: "localhost",
                port: echo.port,
                tls: try certificates.client(),
                proxy: proxy.configuration()
            )
            Issue.record("expected the name check to fail")
        } catch let error as GCDAsyncSocketError {
            #expect(error.domain == .tls)
        }
        await echo.stop()
    }
}
