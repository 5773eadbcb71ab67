import Foundation
import Testing
import TetherTestSupport

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Loads through a real proxy started by the tests (Tests/Tools/proxy.py): HTTP (a CONNECT tunnel for http and https
/// alike, as AsyncHTTPClient does; Basic credentials) and SOCKS5; the environment's proxies as curl reads them.
@Suite(.timeLimit(.minutes(1)))
struct URLConnectionProxyTests {
    @Test func aPlainRequestIsTunnelledThroughAnHTTPProxy() async throws {
        let server = try await TestServer.http()
        let proxy = try ProxyServer()
        var configuration = URLConnection.Configuration(responseCache: nil)
        configuration.proxy = URLConnection.Proxy(.http, host: "127.0.0.1", port: proxy.httpPort)
        let url = server.url("/hello")
        let (data, response) = try await URLConnection.data(for: URLRequest(url: url), configuration: configuration)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(!data.isEmpty)
        #expect(await proxy.logged("CONNECT ") == "CONNECT 127.0.0.1:\(server.port)")
    }

    @Test func anHTTPSRequestIsTunnelledWithConnect() async throws {
        let server = try await TestServer.https()
        let proxy = try ProxyServer()
        var configuration = URLConnection.Configuration(
            responseCache: nil,
            tlsConfiguration: try await TestCertificates.shared().trustingConfiguration()
        )
        configuration.proxy = try URLConnection.Proxy(url: "http://127.0.0.1:\(proxy.httpPort)")
        let (_, response) = try await URLConnection.data(
            for: URLRequest(url: server.url("/hello")),
            configuration: configuration
        )
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(await proxy.logged("CONNECT ") == "CONNECT 127.0.0.1:\(server.port)")
    }

    @Test func proxyCredentialsAreSentAndMissingOnesFailWithUserAuthenticationRequired() async throws {
        let server = try await TestServer.http()
        let proxy = try ProxyServer(auth: "ann:secret")
        var configuration = URLConnection.Configuration(responseCache: nil)
        configuration.proxy = try URLConnection.Proxy(url: "http://ann:secret@127.0.0.1:\(proxy.httpPort)")
        let (_, response) = try await URLConnection.data(
            for: URLRequest(url: server.url("/hello")),
            configuration: configuration
        )
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        configuration.proxy = URLConnection.Proxy(.http, host: "127.0.0.1", port: proxy.httpPort)
        do {
            _ = try await URLConnection.data(for: URLRequest(url: server.url("/hello")), configuration: configuration)
            Issue.record("expected the proxy to refuse")
        } catch let error as URLError {
            #expect(error.code == .userAuthenticationRequired)
        }
        #expect(await proxy.logged("407") == "407")
    }

    @Test func aRequestGoesThroughASOCKS5Proxy() async throws {
        let server = try await TestServer.http()
        let proxy = try ProxyServer()
        var configuration = URLConnection.Configuration(responseCache: nil)
        configuration.proxy = try URLConnection.Proxy(url: "socks5://127.0.0.1:\(proxy.socksPort)")
        let (_, response) = try await URLConnection.data(
            for: URLRequest(url: server.url("/hello")),
            configuration: configuration
        )
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(await proxy.logged("SOCKS ") == "SOCKS 127.0.0.1:\(server.port)")
    }

    @Test func aProxyThatIsNotThereFailsTheLoad() async throws {
        let server = try await TestServer.http()
        var configuration = URLConnection.Configuration(responseCache: nil)
        configuration.proxy = URLConnection.Proxy(.http, host: "127.0.0.1", port: 9)
        await #expect(throws: URLError.self) {
            _ = try await URLConnection.data(for: URLRequest(url: server.url("/hello")), configuration: configuration)
        }
    }

    // MARK: - Rules without a proxy

    @Test(
        arguments: [
            // URL, environment, the proxy chosen
            ("http://a.test/", ["http_proxy": "p:1"], "http://p:1"),
            ("http://a.test/", ["HTTP_PROXY": "p:1"], "none"),
            ("http://a.test/", ["all_proxy": "socks5://s:2"], "socks5://s:2"),
            ("https://a.test/", ["http_proxy": "p:1"], "none"),
            ("https://a.test/", ["HTTPS_PROXY": "p:3", "ALL_PROXY": "p:4"], "http://p:3"),
            ("https://a.test/", ["ALL_PROXY": "socks5h://s"], "socks5://s:1080"),
            ("http://a.test/", ["http_proxy": "p:1", "no_proxy": "a.test"], "none"),
            ("http://www.a.test/", ["http_proxy": "p:1", "no_proxy": ".a.test"], "none"),
            ("http://www.a.test/", ["http_proxy": "p:1", "no_proxy": "other.test, a.test"], "none"),
            ("http://nota.test/", ["http_proxy": "p:1", "no_proxy": "a.test"], "http://p:1"),
            ("http://127.0.0.1:8080/", ["http_proxy": "p:1", "NO_PROXY": "127.0.0.1"], "none"),
            ("http://a.test/", ["http_proxy": "p:1", "no_proxy": "*"], "none"),
            ("http://a.test/", ["http_proxy": "ftp://p:1", "no_proxy": "a.test"], "none"),
        ] as [(String, [String: String], String)]
    )
    func theEnvironmentIsReadAsCurlReadsIt(url: String, environment: [String: String], expected: String) throws {
        let chosen = try ProxyRules.proxy(
            for: URL(string: url)!,
            explicit: nil,
            usesEnvironment: true,
            environment: environment
        )
        #expect(chosen?.description ?? "none" == expected)
    }

    @Test func theEnvironmentIsOptInAndAnExplicitProxyWins() throws {
        let environment = ["http_proxy": "p:1"]
        let url = URL(string: "http://a.test/")!
        #expect(try ProxyRules.proxy(for: url, explicit: nil, usesEnvironment: false, environment: environment) == nil)
        let explicit = URLConnection.Proxy(.socks5, host: "s", port: 5)
        #expect(
            try ProxyRules.proxy(for: url, explicit: explicit, usesEnvironment: true, environment: environment)
                == explicit
        )
    }

    @Test(arguments: ["ftp://p:1", "http://", "http://p:0", "http://p:70000"])
    func aBadProxyURLIsABadURL(url: String) {
        #expect(throws: URLError.self) { try URLConnection.Proxy(url: url) }
    }
}

/// `tether get --proxy` and `--proxy-from-environment`, run as a user would.
@Suite(.timeLimit(.minutes(1)))
struct GetCommandProxyTests {
    @Test func getGoesThroughTheProxyItIsGivenOrTheEnvironmentNames() async throws {
        let server = try await TestServer.http()
        let proxy = try ProxyServer()
        let tether = try BuiltProduct.require("tether")
        let url = server.url("/hello").absoluteString
        let given = try await CommandRun.run(
            tether,
            ["get", "--no-cache", "--proxy", "socks5://127.0.0.1:\(proxy.socksPort)", url]
        )
        #expect(given.status == 0, "\(given.errors)")
        #expect(given.output == "hello")
        #expect(await proxy.logged("SOCKS ") == "SOCKS 127.0.0.1:\(server.port)")

        var environment = ProcessInfo.processInfo.environment
        environment["http_proxy"] = "http://127.0.0.1:\(proxy.httpPort)"
        environment["no_proxy"] = ""
        let fromEnvironment = try await CommandRun.run(
            tether,
            ["get", "--no-cache", "--proxy-from-environment", url],
            environment: environment
        )
        #expect(fromEnvironment.output == "hello")
        #expect(await proxy.logged("CONNECT ") == "CONNECT 127.0.0.1:\(server.port)")

        let bad = try await CommandRun.run(tether, ["get", "--proxy", "ftp://x", url])
        #expect(bad.status != 0)
        #expect(bad.errors.contains("--proxy"))
    }
}

/// `tether get --metrics`.
@Suite(.timeLimit(.minutes(1)))
struct GetCommandMetricsTests {
    @Test func getPrintsOneLinePerTransactionAndATotal() async throws {
        let server = try await TestServer.http()
        let tether = try BuiltProduct.require("tether")
        let run = try await CommandRun.run(
            tether,
            ["get", "--no-cache", "--metrics", server.url("/redirect/1").absoluteString]
        )
        #expect(run.status == 0, "\(run.errors)")
        let lines = run.errors.split(separator: "\n").filter { $0.hasPrefix("metrics: ") }
        #expect(lines.count == 3, "\(run.errors)")
        #expect(lines.first?.contains("/redirect/1 302 http/1.1") == true)
        #expect(lines.dropFirst().first?.contains("/echo 200 http/1.1") == true)
        #expect(lines.last?.hasSuffix("1 redirects") == true)
        let withFile = try await CommandRun.run(
            tether,
            ["get", "--metrics", "-o", "/tmp/x", server.url("/hello").absoluteString]
        )
        #expect(withFile.status != 0 && withFile.errors.contains("--metrics"))
    }
}
