import Foundation
import NIOCore
import Testing
import TetherSockets
import TetherTestSupport

/// `tether nc --proxy` and `--proxy-from-environment`, run as a user would, through real proxies on 127.0.0.1.
@Suite(.timeLimit(.minutes(2)))
struct ProxyCommandTests {
    func netcat(
        _ arguments: [String],
        input: String,
        environment: [String: String]? = nil
    ) async throws
        -> CommandRun
    {
        try await CommandRun.run(
            try BuiltProduct.require("tether"),
            ["nc"] + arguments,
            environment: environment,
            input: input
        )
    }

    /// `--proxy URL` as a user writes it for `proxy`.
    func url(_ proxy: ProxyServer, credentials: ProxyCredentials?? = nil) -> String {
        let configuration = proxy.configuration(credentials: credentials)
        let scheme = configuration.kind == .socks5 ? "socks5" : "http"
        let login = configuration.credentials.map { "\($0.username):\($0.password)@" } ?? ""
        return "\(scheme)://\(login)127.0.0.1:\(proxy.port)"
    }

    // Dante only: nc half-closes after standard input, and microsocks and tinyproxy end the whole tunnel on the
    // client's half-close, before the echo can come back.
    @Test(arguments: [ProxyServer.Kind.dante])
    func netcatTalksToTheTargetThroughTheProxy(kind: ProxyServer.Kind) async throws {
        let echo = try await ProxyEchoServer.start()
        let proxy = try await ProxyServer.start(kind, allowedPort: echo.port)
        defer { proxy.stop() }
        let run = try await netcat(["--proxy", url(proxy), "127.0.0.1", "\(echo.port)"], input: "via proxy\n")
        #expect(run.output == "via proxy\n")
        #expect(run.status == 0, "\(run.errors)")
        await echo.stop()
    }

    @Test func theEnvironmentsProxyCarriesTheConnection() async throws {
        let echo = try await ProxyEchoServer.start()
        let proxy = try await ProxyServer.start(.dante, allowedPort: echo.port)
        defer { proxy.stop() }
        let run = try await netcat(
            ["--proxy-from-environment", "127.0.0.1", "\(echo.port)"],
            input: "via the environment\n",
            environment: ["ALL_PROXY": url(proxy)]
        )
        #expect(run.output == "via the environment\n")
        #expect(run.status == 0, "\(run.errors)")
        await echo.stop()
    }

    @Test func noProxyExcludesTheHostFromTheEnvironmentsProxy() async throws {
        let echo = try await ProxyEchoServer.start()
        // A proxy that nobody listens on: a connection through it fails.
        let unreachable = ["all_proxy": "socks5://127.0.0.1:1"]
        let through = try await netcat(
            ["--proxy-from-environment", "127.0.0.1", "\(echo.port)"],
            input: "through\n",
            environment: unreachable
        )
        #expect(through.status == 1)
        #expect(through.errors.hasPrefix("error: "))
        let direct = try await netcat(
            ["--proxy-from-environment", "127.0.0.1", "\(echo.port)"],
            input: "direct\n",
            environment: unreachable.merging(["NO_PROXY": "localhost,127.0.0.1"]) { $1 }
        )
        #expect(direct.output == "direct\n")
        #expect(direct.status == 0, "\(direct.errors)")
        await echo.stop()
    }

    @Test(arguments: [ProxyServer.Kind.microsocks, .tinyproxy])
    func aRefusedLoginExitsOneWithTheProxysReason(kind: ProxyServer.Kind) async throws {
        let echo = try await ProxyEchoServer.start()
        let proxy = try await ProxyServer.start(kind, allowedPort: echo.port)
        defer { proxy.stop() }
        let wrong = ProxyCredentials(username: "tether", password: "letmein")
        let run = try await netcat(
            ["--proxy", url(proxy, credentials: wrong), "127.0.0.1", "\(echo.port)"],
            input: "x\n"
        )
        #expect(run.status == 1)
        #expect(run.errors.hasPrefix("error: "))
        #expect(run.errors.contains(kind == .tinyproxy ? "401 Unauthorized" : "refused the login"))
        #expect(!run.errors.contains("letmein"))
        await echo.stop()
    }

    @Test(arguments: [
        ["--proxy", "https://127.0.0.1:1", "h", "1"],
        ["--proxy", "socks5://127.0.0.1:1", "--proxy-from-environment", "h", "1"],
        ["--proxy", "socks5://127.0.0.1:1", "--listen", "127.0.0.1", "0"],
        ["--proxy", "socks5://127.0.0.1:1", "--udp", "h", "1"],
    ])
    func badProxyArgumentsExitWithTheUsageStatus(arguments: [String]) async throws {
        let run = try await netcat(arguments, input: "")
        #expect(run.status == 64)
    }
}
