import Foundation
import NIOHTTP1
import NIOSSL
import Testing

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which stored cookies a request carries and which a response may store (RFC 6265 §5.3, §5.4), against in-process
/// origins on 127.0.0.1 and the shared cookie storage. Each test uses cookie names of its own.
@Suite(.timeLimit(.minutes(1)))
struct CookieSendingTests {
    /// Sets the cookie line `?set=` asks for, and echoes the `Cookie` header it received as the body.
    static let cookieOrigin: @Sendable (ScriptedOrigin.Request) -> ScriptedOrigin.Response = { request in
        let query = URLComponents(string: request.uri)?.queryItems ?? []
        var headers: [(String, String)] = []
        if let line = query.first(where: { $0.name == "set" })?.value { headers.append(("Set-Cookie", line)) }
        return ScriptedOrigin.Response(200, headers, request.headers["Cookie"].joined(separator: "; "))
    }

    static func trusting() async throws -> URLConnection.Configuration {
        URLConnection.Configuration(
            responseCache: nil,
            tlsConfiguration: try await TestCertificates.shared().trustingConfiguration()
        )
    }

    static func cookieHeader(_ url: URL, _ configuration: URLConnection.Configuration) async throws -> String {
        let (data, _) = try await URLConnection.data(for: request(url), configuration: configuration)
        return String(decoding: data, as: UTF8.self)
    }

    static func setting(_ line: String, at origin: ScriptedOrigin, path: String = "/cookies/set") -> URL {
        var components = URLComponents(url: origin.url(path), resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "set", value: line)]
        return components.url!
    }

    @Test func aSecureCookieIsNotSentOverPlainHTTPNorOutsideItsPath() async throws {
        let name = "s-\(UUID().uuidString.prefix(8))"
        let configuration = try await Self.trusting()
        try await withScriptedOrigin(tls: true, Self.cookieOrigin) { secure in
            try await withScriptedOrigin(Self.cookieOrigin) { plain in
                _ = try await Self.cookieHeader(
                    Self.setting("\(name)=1; Secure; Path=/admin", at: secure),
                    configuration
                )
                #expect(try await !Self.cookieHeader(plain.url("/admin"), configuration).contains(name))
                #expect(try await !Self.cookieHeader(plain.url("/x"), configuration).contains(name))
                #expect(try await !Self.cookieHeader(secure.url("/x"), configuration).contains(name))
                #expect(try await !Self.cookieHeader(secure.url("/administrator"), configuration).contains(name))
                #expect(try await Self.cookieHeader(secure.url("/admin/page"), configuration).contains("\(name)=1"))
            }
        }
    }

    @Test func aSecureCookieFromPlainHTTPIsNotStored() async throws {
        let name = "ps-\(UUID().uuidString.prefix(8))"
        try await withScriptedOrigin(Self.cookieOrigin) { plain in
            _ = try await Self.cookieHeader(Self.setting("\(name)=1; Secure", at: plain), .uncached)
            #expect(HTTPCookieStorage.shared.cookies?.contains { $0.name == name } == false)
        }
    }

    @Test func aCookieWithoutAPathIsSentOnlyUnderItsDefaultPath() async throws {
        let name = "p-\(UUID().uuidString.prefix(8))"
        try await withScriptedOrigin(Self.cookieOrigin) { origin in
            _ = try await Self.cookieHeader(Self.setting("\(name)=1", at: origin, path: "/account/login"), .uncached)
            #expect(try await Self.cookieHeader(origin.url("/account/home"), .uncached).contains("\(name)=1"))
            #expect(try await !Self.cookieHeader(origin.url("/other"), .uncached).contains(name))
        }
    }

    @Test func aDomainAttributeFromAnIPAddressIsRefused() async throws {
        let name = "d-\(UUID().uuidString.prefix(8))"
        try await withScriptedOrigin(Self.cookieOrigin) { origin in
            _ = try await Self.cookieHeader(Self.setting("\(name)=1; Domain=0.0.1", at: origin), .uncached)
            #expect(HTTPCookieStorage.shared.cookies?.contains { $0.name == name } == false)
        }
    }
}
