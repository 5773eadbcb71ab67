public import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Entry points into TetherHTTP's parsers of untrusted header values, for the libFuzzer targets in `Fuzz/`
/// (`@_spi(Fuzzing) import TetherHTTP`). Each calls the code a connection runs, unchanged. Not for applications:
/// this interface may change at any time.
@_spi(Fuzzing)
public enum HeaderParsing {
    /// One `WWW-Authenticate` / `Proxy-Authenticate` challenge that Tether can answer.
    public struct Challenge: Sendable, Hashable {
        /// `true` for Digest, `false` for Basic.
        public var isDigest: Bool
        /// The auth-params by lowercased name, values unquoted.
        public var parameters: [String: String]

        /// Creates a challenge.
        public init(isDigest: Bool, parameters: [String: String]) {
            self.isDigest = isDigest
            self.parameters = parameters
        }

        fileprivate init(_ challenge: HTTPAuthChallenge) {
            self.init(isDigest: challenge.scheme == .digest, parameters: challenge.parameters)
        }

        fileprivate var internalChallenge: HTTPAuthChallenge {
            HTTPAuthChallenge(scheme: isDigest ? .digest : .basic, parameters: parameters)
        }
    }

    /// What the response cache decides about one stored response.
    public struct CacheDecision: Sendable, Hashable {
        /// The freshness lifetime in seconds (`max-age`, else `Expires − Date`, else the heuristic one).
        public var freshnessLifetime: TimeInterval
        /// Whether the entry may be used without asking the server.
        public var usableWithoutRevalidation: Bool
        /// Whether a stale entry must be revalidated (`must-revalidate` or `no-cache`).
        public var mustRevalidate: Bool
    }

    /// The `Cache-Control` directives of `value`: lowercased names, unquoted values (`""` for none).
    public static func cacheControlDirectives(_ value: String) -> [String: String] {
        CacheRules.directives(value)
    }

    /// The cache's decision about a `200` response to a `GET` stored at `now` with these response headers and
    /// request `Cache-Control`.
    public static func cacheDecision(
        responseHeaders: [String: String],
        requestCacheControl: String?,
        now: Date
    ) -> CacheDecision {
        let url = URL(string: "http://fuzz.invalid/")!
        let entry = CacheEntry(
            url: url,
            statusCode: 200,
            headers: responseHeaders,
            body: Data(),
            requestDate: now,
            responseDate: now,
            varyValues: [:],
            storagePolicy: 0
        )
        var request = URLRequest(url: url)
        request.setValue(requestCacheControl, forHTTPHeaderField: "Cache-Control")
        return CacheDecision(
            freshnessLifetime: CacheRules.freshnessLifetime(entry),
            usableWithoutRevalidation: CacheRules.canUseWithoutRevalidation(entry, request: request, now: now),
            mustRevalidate: CacheRules.mustRevalidate(entry)
        )
    }

    /// The Basic and Digest challenges in one header value, in order (other schemes are skipped).
    public static func challenges(in value: String) -> [Challenge] {
        HTTPAuthChallenge.parse(value).map(Challenge.init)
    }

    /// The challenge a connection answers among these header values: Digest with a supported algorithm, else Basic.
    public static func strongestChallenge(in values: [String]) -> Challenge? {
        HTTPAuthChallenge.strongest(in: values).map(Challenge.init)
    }

    /// Whether Tether can answer this Digest challenge (a nonce, a supported algorithm and `qop`).
    public static func supportsDigest(_ challenge: Challenge) -> Bool {
        DigestAuthorization.supports(challenge.internalChallenge)
    }

    /// The `Authorization` value a connection sends for a Digest challenge (with a fixed client nonce).
    public static func digestAuthorization(
        for challenge: Challenge,
        user: String,
        password: String,
        uri: String
    ) -> String {
        DigestAuthorization.digest(
            challenge: challenge.internalChallenge,
            user: user,
            password: password,
            method: "GET",
            uri: uri,
            nonceCount: 1,
            clientNonce: "0a4f113b"
        )
    }
}
