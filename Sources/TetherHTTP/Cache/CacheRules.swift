import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// RFC 9111 rules for a private cache: what may be stored, freshness, age and when to revalidate.
enum CacheRules {
    /// The statuses stored on a validator alone (RFC 9111 §4.2.2's heuristically cacheable ones, without 206, whose
    /// parts follow ``isStorablePart(_:)``, and 308, which the cache does not keep); any other final status needs
    /// explicit freshness.
    static let storableStatuses: Set<Int> = [200, 203, 204, 300, 301, 404, 405, 410, 414, 501]
    /// The headers that can make a response storable (with a `max-age` directive, a date, or a validator).
    static let freshnessHeaderNames = ["Cache-Control", "Expires", "ETag", "Last-Modified"]

    /// Whether a response may be stored.
    ///
    /// - Parameters:
    ///   - request: The request, with the `Authorization` the load added for a challenge.
    ///   - isShared: True for a cache that serves more than one user (RFC 9111's shared cache): it stores no
    ///     `private` response and no response that sets a cookie, and a response to a request that carried
    ///     `Authorization` or `Cookie` only when the response says `public`, `s-maxage` or `must-revalidate`
    ///     (RFC 9111 §3.5; Tether treats a `Cookie` header of the request as a credential).
    static func isStorable(
        request: URLRequest,
        statusCode: Int,
        headers: [String: String],
        isShared: Bool = false
    ) -> Bool {
        let method = HTTPLoad.method(of: request)
        guard method == "GET" || (method == "POST" && self.answersLaterGETs(request: request, headers: headers))
        else { return false }
        // Storing needs max-age, Expires or a validator: a response with none of their headers (the common case)
        // is decided in one pass over its names, without parsing any directive.
        guard
            headers.keys.contains(where: { name in
                self.freshnessHeaderNames.contains { HeaderLookup.namesMatch(name, $0) }
            })
        else { return false }
        let requestDirectives = self.directives(request.value(forHTTPHeaderField: "Cache-Control"))
        let responseDirectives = self.directives(HeaderLookup.value("Cache-Control", in: headers))
        if requestDirectives["no-store"] != nil { return false }
        // `must-understand` (RFC 9111 §5.2.2.3): store only a status whose rules the cache knows, and then
        // regardless of `no-store`.
        if responseDirectives["must-understand"] != nil {
            guard self.storableStatuses.contains(statusCode) else { return false }
        } else if responseDirectives["no-store"] != nil {
            return false
        }
        if isShared, !self.sharedCacheMayStore(request: request, headers: headers, directives: responseDirectives) {
            return false
        }
        if let vary = HeaderLookup.value("Vary", in: headers),
            vary.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == "*" })
        {
            return false
        }
        let hasMaxAge =
            responseDirectives["max-age"].flatMap { Int($0) } != nil
            || (isShared && responseDirectives["s-maxage"].flatMap { Int($0) } != nil)
        let hasExpires = HeaderLookup.value("Expires", in: headers) != nil
        let hasValidator =
            HeaderLookup.value("ETag", in: headers) != nil || HeaderLookup.value("Last-Modified", in: headers) != nil
        // A part with a strong validator (which it has by then); any other final status with explicit freshness, or
        // marked `public` with a validator (RFC 9111 §3: then it may be fresh on a heuristic, §4.2.2); not 304.
        if statusCode == 206 { return self.isStorablePart(headers) }
        guard self.storableStatuses.contains(statusCode) else {
            return (200..<600).contains(statusCode) && statusCode != 304
                && (hasMaxAge || hasExpires || (responseDirectives["public"] != nil && hasValidator))
        }
        return hasMaxAge || hasExpires || hasValidator
    }

    /// Whether a response to a `POST` may answer later `GET`s of its URL (RFC 9110 §9.3.3): it has explicit freshness
    /// (`max-age`, `Expires`) and a `Content-Location` that is the request's URL.
    static func answersLaterGETs(request: URLRequest, headers: [String: String]) -> Bool {
        guard let url = request.url, let location = HeaderLookup.value("Content-Location", in: headers),
            let target = URL(string: location, relativeTo: url)?.absoluteURL,
            self.key(for: target) == self.key(for: url)
        else { return false }
        let directives = self.directives(HeaderLookup.value("Cache-Control", in: headers))
        return directives["max-age"].flatMap { Int($0) } != nil || HeaderLookup.value("Expires", in: headers) != nil
    }

    /// The shared-cache rules of ``isStorable(request:statusCode:headers:isShared:)``.
    private static func sharedCacheMayStore(
        request: URLRequest,
        headers: [String: String],
        directives: [String: String]
    ) -> Bool {
        if directives["private"] != nil || HeaderLookup.value("Set-Cookie", in: headers) != nil { return false }
        let carriesCredentials =
            request.value(forHTTPHeaderField: "Authorization") != nil
            || request.value(forHTTPHeaderField: "Cookie") != nil
        guard carriesCredentials else { return true }
        return ["public", "s-maxage", "must-revalidate"].contains { directives[$0] != nil }
    }

    /// The hop-by-hop fields a cache must not store (RFC 9111 §3.1): `Connection` and the fields it names,
    /// `Proxy-Connection`, `Keep-Alive`, `TE`, `Transfer-Encoding` and `Upgrade`.
    static func storedHeaders(_ headers: [String: String]) -> [String: String] {
        var removed: Set<String> = [
            "connection", "proxy-connection", "keep-alive", "te", "transfer-encoding", "upgrade",
        ]
        for value in headers.filter({ HeaderLookup.namesMatch($0.key, "Connection") }).map(\.value) {
            for name in value.split(separator: ",") {
                removed.insert(name.trimmingCharacters(in: .whitespaces).lowercased())
            }
        }
        guard headers.keys.contains(where: { removed.contains($0.lowercased()) }) else { return headers }
        return headers.filter { !removed.contains($0.key.lowercased()) }
    }

    static func parseDate(_ text: String?) -> Date? {
        guard let text else { return nil }
        return HTTPDate.parse(text)
    }

    /// Freshness lifetime in seconds: `s-maxage` in a shared cache (RFC 9111 §5.2.2.10), else `max-age`, else
    /// `Expires − Date`, else (with `heuristics`) the heuristic lifetime (``heuristicLifetime(_:)``).
    static func freshnessLifetime(_ entry: CacheEntry, heuristics: Bool = true) -> TimeInterval {
        self.explicitLifetime(entry) ?? (heuristics ? self.heuristicLifetime(entry) : 0)
    }

    /// The lifetime the response states (`s-maxage` in a shared cache, `max-age`, `Expires`), or nil when it states
    /// none.
    static func explicitLifetime(_ entry: CacheEntry) -> TimeInterval? {
        let directives = self.directives(entry.header("Cache-Control"))
        if entry.isInSharedCache == true, let sharedMaxAge = directives["s-maxage"].flatMap({ Int($0) }) {
            return TimeInterval(sharedMaxAge)
        }
        if let maxAge = directives["max-age"].flatMap({ Int($0) }) { return TimeInterval(maxAge) }
        if let expiresText = entry.header("Expires") {
            guard let expires = self.parseDate(expiresText) else { return 0 }  // invalid Expires = already expired
            let date = self.parseDate(entry.header("Date")) ?? entry.responseDate
            return expires.timeIntervalSince(date)
        }
        return nil
    }

    /// Current age (RFC 9111 §4.2.3), with `Age` on receipt plus the time since.
    static func currentAge(_ entry: CacheEntry, now: Date) -> TimeInterval {
        let dateValue = self.parseDate(entry.header("Date")) ?? entry.responseDate
        let apparentAge = max(0, entry.responseDate.timeIntervalSince(dateValue))
        let ageValue = self.ageValue(entry.header("Age"))
        let responseDelay = max(0, entry.responseDate.timeIntervalSince(entry.requestDate))
        let correctedAge = max(apparentAge, ageValue + responseDelay)
        return correctedAge + max(0, now.timeIntervalSince(entry.responseDate))
    }

    /// An `Age` value (RFC 9111 §5.1): its first member if a list, a non-negative integer (at most 2^31), else 0.
    static func ageValue(_ text: String?) -> TimeInterval {
        guard let first = text?.split(separator: ",", omittingEmptySubsequences: false).first else { return 0 }
        let digits = first.trimmingCharacters(in: .whitespaces)
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return 0 }
        return min(TimeInterval(digits) ?? 2_147_483_648, 2_147_483_648)
    }

    static func isFresh(_ entry: CacheEntry, now: Date, heuristics: Bool = true) -> Bool {
        self.freshnessLifetime(entry, heuristics: heuristics) > self.currentAge(entry, now: now)
    }

    /// True when the stored entry may be used without asking the server (protocol cache policy).
    static func canUseWithoutRevalidation(
        _ entry: CacheEntry,
        request: URLRequest,
        now: Date,
        heuristics: Bool = true
    ) -> Bool {
        let requestDirectives = self.directives(request.value(forHTTPHeaderField: "Cache-Control"))
        if requestDirectives["no-cache"] != nil { return false }
        if request.value(forHTTPHeaderField: "Pragma")?.lowercased().contains("no-cache") == true { return false }
        if let maxAge = requestDirectives["max-age"].flatMap({ Int($0) }),
            self.currentAge(entry, now: now) > TimeInterval(maxAge)
        {
            return false
        }
        let responseDirectives = self.directives(entry.header("Cache-Control"))
        // A qualified `no-cache="field"` only keeps its fields from a reuse without revalidation
        // (``servedWithoutRevalidation(_:)``).
        if responseDirectives["no-cache"]?.isEmpty == true { return false }
        let age = self.currentAge(entry, now: now)
        let lifetime = self.freshnessLifetime(entry, heuristics: heuristics)
        // `min-fresh`: fresh for at least that much longer; `max-stale`: stale by at most that much (any, without a
        // value), unless the response must be revalidated once stale (RFC 9111 §5.2.1.2, §5.2.1.3, §5.2.2.2).
        if let minFresh = requestDirectives["min-fresh"].flatMap({ Int($0) }) {
            return lifetime - age >= TimeInterval(minFresh) && lifetime > age
        }
        if lifetime > age { return true }
        guard let maxStale = requestDirectives["max-stale"], !self.mustRevalidate(entry) else {
            return false
        }
        return maxStale.isEmpty || Int(maxStale).map { age - lifetime <= TimeInterval($0) } ?? false
    }

    /// True when a stale entry may be served while it is revalidated in the background (RFC 5861): it has been
    /// stale for at most its `stale-while-revalidate` seconds, it need not be revalidated once stale
    /// (`must-revalidate`, `no-cache`), and the request does not ask for anything fresher (`no-cache`, `max-age`,
    /// `min-fresh`, `Pragma: no-cache`).
    static func canServeWhileRevalidating(
        _ entry: CacheEntry,
        request: URLRequest,
        now: Date,
        heuristics: Bool = true
    ) -> Bool {
        let responseDirectives = self.directives(entry.header("Cache-Control"))
        guard let window = responseDirectives["stale-while-revalidate"].flatMap({ Int($0) }),
            !self.mustRevalidate(entry)
        else { return false }
        let requestDirectives = self.directives(request.value(forHTTPHeaderField: "Cache-Control"))
        if ["no-cache", "max-age", "min-fresh"].contains(where: { requestDirectives[$0] != nil }) { return false }
        if request.value(forHTTPHeaderField: "Pragma")?.lowercased().contains("no-cache") == true { return false }
        let staleness = self.currentAge(entry, now: now) - self.freshnessLifetime(entry, heuristics: heuristics)
        return staleness > 0 && staleness <= TimeInterval(window)
    }

    /// Whether a stale entry must be revalidated before it is served: `must-revalidate`, `no-cache`, and in a shared
    /// cache also `proxy-revalidate` and `s-maxage` (RFC 9111 §5.2.2.8, §5.2.2.10).
    static func mustRevalidate(_ entry: CacheEntry) -> Bool {
        let directives = self.directives(entry.header("Cache-Control"))
        if directives["must-revalidate"] != nil || directives["no-cache"]?.isEmpty == true { return true }
        return entry.isInSharedCache == true && (directives["proxy-revalidate"] != nil || directives["s-maxage"] != nil)
    }

    /// What an unsafe request that succeeded invalidates besides its own URL (RFC 9111 §4.4): the URLs in the
    /// response's `Location` and `Content-Location`, when they have the request's origin.
    static func invalidatedURLs(after url: URL, headers: [String: String]) -> [URL] {
        let origin = RedirectRules.origin(of: url)
        return ["Location", "Content-Location"].compactMap { name in
            guard let value = HeaderLookup.value(name, in: headers),
                let target = URL(string: value, relativeTo: url)?.absoluteURL,
                origin != nil, RedirectRules.origin(of: target) == origin
            else { return nil }
            return target
        }
    }

    /// The cache key: the URL without its fragment, its user info and its scheme's default port, with the scheme and
    /// host in lower case (`http://H:80/x#f` and `http://h/x` are one resource).
    static func key(for url: URL) -> String {
        // A canonical URL without a fragment (the common case) is the key itself: no parse per lookup.
        let absolute = url.absoluteString
        if !absolute.utf8.contains(UInt8(ascii: "#")), HTTPLoad.isCanonical(absolute),
            !self.mayHaveDefaultPort(absolute)
        {
            return absolute
        }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return absolute }
        components.fragment = nil
        components.user = nil
        components.password = nil
        components.scheme = components.scheme?.lowercased()
        components.host = components.host?.lowercased()
        if let port = components.port,
            (components.scheme == "http" && port == 80) || (components.scheme == "https" && port == 443)
        {
            components.port = nil
        }
        if components.path.isEmpty { components.path = "/" }
        return components.string ?? absolute
    }

    /// Whether the authority of an absolute URL string ends in `:80` or `:443`.
    private static func mayHaveDefaultPort(_ absolute: String) -> Bool {
        guard let start = absolute.range(of: "://")?.upperBound else { return false }
        let authority = absolute[start...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return authority.hasSuffix(":80") || authority.hasSuffix(":443")
    }
}
