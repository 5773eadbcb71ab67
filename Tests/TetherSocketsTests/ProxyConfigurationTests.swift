import Testing

@testable import TetherSockets

/// Proxy URLs, descriptions that hide passwords, and the environment as curl reads it.
struct ProxyConfigurationTests {
    @Test(arguments: [
        ("socks5://127.0.0.1:1080", ProxyConfiguration.socks5(host: "127.0.0.1", port: 1080)),
        ("socks5h://proxy.example:9050", .socks5(host: "proxy.example", port: 9050)),
        ("SOCKS5://proxy.example", .socks5(host: "proxy.example", port: 1080)),
        ("http://proxy.example:3128", .httpConnect(host: "proxy.example", port: 3128)),
        ("http://proxy.example", .httpConnect(host: "proxy.example", port: 80)),
        ("proxy.example:8080", .httpConnect(host: "proxy.example", port: 8080)),
        ("http://[::1]:3128", .httpConnect(host: "::1", port: 3128)),
        (
            "socks5://al%40ice:p%3Ass@127.0.0.1:1080",
            .socks5(host: "127.0.0.1", port: 1080, credentials: ProxyCredentials(username: "al@ice", password: "p:ss"))
        ),
        (
            "http://bob:@127.0.0.1:3128",
            .httpConnect(host: "127.0.0.1", port: 3128, credentials: ProxyCredentials(username: "bob", password: ""))
        ),
    ])
    func proxyURLsAreReadAsCurlReadsThem(url: String, expected: ProxyConfiguration) throws {
        #expect(try ProxyConfiguration(url: url) == expected)
    }

    @Test(arguments: [
        "https://proxy.example:443", "socks4://proxy.example:1080", "socks5://:1080", "http://proxy.example:0",
        "http://proxy.example:70000", "",
    ])
    func unusableProxyURLsThrowBadConfiguration(url: String) {
        #expect(throws: ProxyError.self) { try ProxyConfiguration(url: url) }
        do {
            _ = try ProxyConfiguration(url: url)
        } catch let error as ProxyError {
            #expect(error.code == .badConfiguration)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func anUnusableURLsErrorDoesNotShowItsPassword() {
        do {
            _ = try ProxyConfiguration(url: "socks5://user:hunter2@")
            Issue.record("expected an error")
        } catch {
            #expect(!"\(error)".contains("hunter2"))
        }
    }

    @Test func descriptionsShowTheUserButNeverThePassword() throws {
        let proxy = try ProxyConfiguration(url: "socks5://alice:hunter2@127.0.0.1:1080")
        #expect(proxy.description == "socks5://alice:***@127.0.0.1:1080")
        #expect("\(proxy)".contains("hunter2") == false)
        #expect(String(reflecting: proxy.credentials!).contains("hunter2") == false)
        #expect(ProxyConfiguration.httpConnect(host: "::1", port: 3128).description == "http://[::1]:3128")
    }

    @Test func aProxyRefusalIsFoundBehindTheFaceError() {
        let refusal = ProxyError(code: .connectionRefused, message: "refused", replyCode: 5)
        let error = GCDAsyncSocketError.proxy(refusal)
        #expect(error.code == .other)
        #expect(error.proxyError == refusal)
        #expect(ProxyError.Code.connectionRefused ~= error)
        #expect(!(ProxyError.Code.hostUnreachable ~= error))
    }

    // MARK: environment

    static let environmentCases: [([String: String], String, Bool, String?)] = [
        // (environment, host, secure, expected proxy or nil)
        ([:], "example.com", true, nil),
        (["ALL_PROXY": "socks5://127.0.0.1:1080"], "example.com", false, "socks5://127.0.0.1:1080"),
        (["all_proxy": "socks5://127.0.0.1:1"], "example.com", false, "socks5://127.0.0.1:1"),
        (
            ["all_proxy": "socks5://127.0.0.1:1", "ALL_PROXY": "http://127.0.0.1:2"], "a.b", false,
            "socks5://127.0.0.1:1"
        ),
        (["all_proxy": "", "ALL_PROXY": "http://127.0.0.1:2"], "a.b", false, "http://127.0.0.1:2"),
        (["HTTPS_PROXY": "http://127.0.0.1:3128"], "example.com", false, nil),
        (["HTTPS_PROXY": "http://127.0.0.1:3128"], "example.com", true, "http://127.0.0.1:3128"),
        (
            ["https_proxy": "http://127.0.0.1:3", "ALL_PROXY": "socks5://127.0.0.1:4"], "a.b", true,
            "http://127.0.0.1:3"
        ),
        (
            ["https_proxy": "http://127.0.0.1:3", "ALL_PROXY": "socks5://127.0.0.1:4"], "a.b", false,
            "socks5://127.0.0.1:4"
        ),
        (["HTTP_PROXY": "http://127.0.0.1:5"], "example.com", true, nil),
        (["ALL_PROXY": "socks5://127.0.0.1:1", "NO_PROXY": "example.com"], "www.example.com", false, nil),
        (["ALL_PROXY": "socks5://127.0.0.1:1", "no_proxy": "*"], "anything", false, nil),
        (["ALL_PROXY": "socks5://127.0.0.1:1", "no_proxy": "", "NO_PROXY": "a.b"], "a.b", false, nil),
        (["ALL_PROXY": "socks5://127.0.0.1:1", "NO_PROXY": "other.com"], "a.b", false, "socks5://127.0.0.1:1"),
    ]

    @Test(arguments: environmentCases)
    func theEnvironmentIsReadAsCurlReadsIt(
        environment: [String: String],
        host: String,
        secure: Bool,
        expected: String?
    )
        throws
    {
        let proxy = try ProxyConfiguration.fromEnvironment(
            host: host,
            port: 443,
            secure: secure,
            environment: environment
        )
        #expect(proxy?.description == expected)
    }

    @Test func anUnusableProxyVariableThrows() {
        #expect(throws: ProxyError.self) {
            try ProxyConfiguration.fromEnvironment(
                host: "a.b",
                port: 1,
                environment: ["ALL_PROXY": "https://127.0.0.1:443"]
            )
        }
    }

    static let noProxyCases: [(String, String, Bool)] = [
        // (NO_PROXY, host, excluded)
        ("*", "example.com", true),
        ("*, other", "example.com", false),
        ("example.com", "example.com", true),
        ("example.com", "www.example.com", true),
        ("example.com", "notexample.com", false),
        (".example.com", "example.com", true),
        (".example.com", "deep.www.example.com", true),
        ("Example.COM.", "www.example.com.", true),
        ("foo.com, example.com", "www.example.com", true),
        ("foo.com,  bar.com ", "bar.com", true),
        ("com", "example.com", true),
        ("ample.com", "example.com", false),
        ("localhost", "127.0.0.1", false),
        ("127.0.0.1", "127.0.0.1", true),
        ("127.0.0.1", "127.0.0.2", false),
        ("10.0.0.0/8", "10.200.3.4", true),
        ("10.0.0.0/8", "11.0.0.1", false),
        ("192.168.1.128/25", "192.168.1.200", true),
        ("192.168.1.128/25", "192.168.1.100", false),
        ("0.0.0.0/0", "8.8.8.8", true),
        ("::1", "[::1]", true),
        ("[::1]", "::1", true),
        ("fd00::/8", "fd12:3456::1", true),
        ("fd00::/8", "fe80::1", false),
        ("10.0.0.0/33", "10.0.0.1", false),
        ("10.0.0.0/8", "::ffff:10.0.0.1", false),
        ("", "example.com", false),
    ]

    @Test(arguments: noProxyCases)
    func noProxyMatchesSuffixesDomainsAndAddresses(list: String, host: String, excluded: Bool) {
        #expect(ProxyConfiguration.noProxy(list, excludes: host) == excluded)
    }
}
