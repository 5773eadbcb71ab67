import Foundation
import Testing

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// RFC 6265's send (§5.4) and storage (§5.3) rules, without I/O: cookies as Foundation parses them from a
/// `Set-Cookie` line, decided for a URL.
struct CookieRulesTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// The cookie Foundation makes of `line` for a response from `url`.
    static func parsed(_ line: String, from url: String) throws -> HTTPCookie {
        try #require(HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": line], for: URL(string: url)!).first)
    }

    @Test(
        arguments: [
            // set by, Set-Cookie line, request URL, sent?
            ("https://a.test/", "c=1; Secure", "https://a.test/", true),
            ("https://a.test/", "c=1; Secure", "http://a.test/", false),
            ("http://a.test/", "c=1; Path=/admin", "http://a.test/admin", true),
            ("http://a.test/", "c=1; Path=/admin", "http://a.test/admin/x", true),
            ("http://a.test/", "c=1; Path=/admin", "http://a.test/administrator", false),
            ("http://a.test/", "c=1; Path=/admin", "http://a.test/", false),
            ("http://a.test/", "c=1; Path=/admin/", "http://a.test/admin/x", true),
            ("http://a.test/", "c=1", "http://b.a.test/", false),
            ("http://a.test/", "c=1; Domain=a.test", "http://b.a.test/", true),
            ("http://a.test/", "c=1; Domain=a.test", "http://ba.test/", false),
            ("http://a.test/", "c=1", "http://a.test:8080/", true),
            ("http://a.test/", "c=1; Expires=Wed, 01 Jan 2020 00:00:00 GMT", "http://a.test/", false),
            ("http://a.test/", "c=1; Expires=Wed, 01 Jan 2200 00:00:00 GMT", "http://a.test/", true),
            ("http://127.0.0.1/", "c=1", "http://127.0.0.1/", true),
            ("http://127.0.0.1/", "c=1", "http://127.0.0.2/", false),
        ]
    )
    func aRequestCarriesOnlyTheCookiesThatMatchIt(setBy: String, line: String, url: String, sent: Bool) throws {
        let cookie = try Self.parsed(line, from: setBy)
        #expect(CookieRules(now: Self.now).shouldSend(cookie, to: URL(string: url)!) == sent)
    }

    @Test func aStoredCookieForAPublicSuffixIsNotSent() throws {
        // What Foundation on Linux stores from evil.com's `Domain=.com`.
        let cookie = try #require(
            HTTPCookie(properties: [.name: "c", .value: "1", .domain: ".com", .path: "/"])
        )
        #expect(!CookieRules(now: Self.now).shouldSend(cookie, to: URL(string: "http://bank.com/")!))
        let coUK = try #require(HTTPCookie(properties: [.name: "c", .value: "1", .domain: ".co.uk", .path: "/"]))
        #expect(!CookieRules(now: Self.now).shouldSend(coUK, to: URL(string: "http://bank.co.uk/")!))
    }

    @Test(
        arguments: [
            // response URL, Set-Cookie line, stored as (domain path) or "refused"
            ("http://evil.com/", "c=1; Domain=.com", "refused"),
            ("http://evil.com/", "c=1; Domain=com", "refused"),
            ("http://evil.co.uk/", "c=1; Domain=co.uk", "refused"),
            ("http://a.github.io/", "c=1; Domain=github.io", "refused"),
            ("http://a.test/", "c=1; Domain=b.test", "refused"),
            ("http://a.test/", "c=1; Domain=www.a.test", "refused"),
            ("http://www.a.test/", "c=1; Domain=a.test", ".a.test /"),
            ("http://127.0.0.1/", "c=1; Domain=0.0.1", "refused"),
            ("http://127.0.0.1/", "c=1; Domain=127.0.0.1", "127.0.0.1 /"),
            ("http://127.0.0.1/", "c=1; Domain=127.0.0.2", "refused"),
            ("http://localhost/", "c=1; Domain=localhost", "localhost /"),
            ("http://a.test/", "c=1; Secure", "refused"),
            ("https://a.test/", "c=1; Secure", "a.test /"),
            ("http://a.test/x/y/page", "c=1", "a.test /x/y"),
            ("http://a.test/page", "c=1", "a.test /"),
            ("http://a.test/x/y/page", "c=1; Path=/x", "a.test /x"),
            ("http://a.test/x/y/page", "c=1; Path=relative", "a.test /x/y"),
            ("https://a.test/", "__Secure-c=1", "refused"),
            ("https://a.test/", "__Secure-c=1; Secure", "a.test /"),
            ("https://a.test/", "__Host-c=1; Secure; Path=/", "a.test /"),
            ("https://a.test/", "__Host-c=1; Secure; Path=/x", "refused"),
            ("https://www.a.test/", "__Host-c=1; Secure; Path=/; Domain=a.test", "refused"),
        ]
    )
    func aResponseStoresOnlyTheCookiesItMaySet(url: String, line: String, stored: String) throws {
        let cookie = try Self.parsed(line, from: url)
        let kept = CookieRules(now: Self.now).cookieToStore(cookie, from: URL(string: url)!, line: line)
        #expect(kept.map { "\($0.domain) \($0.path)" } ?? "refused" == stored)
    }

    @Test(
        arguments: [
            ("/", "/", true), ("/a", "/", true), ("/a", "/a", true), ("/a/b", "/a", true), ("/ab", "/a", false),
            ("/a", "/a/", false), ("/a/", "/a/", true), ("/", "/a", false),
        ]
    )
    func pathsMatchAsRFC6265Says(requestPath: String, cookiePath: String, matches: Bool) {
        #expect(CookieRules.pathMatches(requestPath, cookiePath: cookiePath) == matches)
    }

    @Test func theLongestPathComesFirst() throws {
        let url = URL(string: "http://a.test/x/y")!
        let short = try Self.parsed("a=1; Path=/", from: "http://a.test/")
        let long = try Self.parsed("b=2; Path=/x/y", from: "http://a.test/")
        let middle = try Self.parsed("c=3; Path=/x", from: "http://a.test/")
        #expect(CookieRules(now: Self.now).cookies([short, long, middle], for: url).map(\.name) == ["b", "c", "a"])
    }
}
