import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CacheRules {
    /// The fields named by a qualified `no-cache="field, …"` (RFC 9111 §5.2.2.4), in lower case: a stored response
    /// is reused without them unless it was revalidated.
    static func qualifiedNoCacheFields(_ entry: CacheEntry) -> Set<String> {
        guard let value = self.directives(entry.header("Cache-Control"))["no-cache"], !value.isEmpty else { return [] }
        return Set(
            value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                .filter { !$0.isEmpty }
        )
    }

    /// `entry` as it may be served without revalidation: without the fields a qualified `no-cache` names.
    static func servedWithoutRevalidation(_ entry: CacheEntry) -> CacheEntry {
        let omitted = self.qualifiedNoCacheFields(entry)
        guard !omitted.isEmpty else { return entry }
        var served = entry
        served.headers = entry.headers.filter { !omitted.contains($0.key.lowercased()) }
        return served
    }

    /// Whether the response says `immutable` (RFC 8246): it does not change while it is fresh, so a reload need not
    /// revalidate it.
    static func isImmutable(_ entry: CacheEntry) -> Bool {
        self.directives(entry.header("Cache-Control"))["immutable"] != nil
    }

    /// Whether `entry` may be served in place of a server error (`5xx`): the response or the request allows it with
    /// `stale-if-error=N` (RFC 5861 §4) and it has been stale for at most N seconds, and it need not be revalidated
    /// once stale (`must-revalidate`, `no-cache`).
    static func canServeOnError(
        _ entry: CacheEntry,
        request: URLRequest,
        now: Date,
        heuristics: Bool = true
    ) -> Bool {
        guard !self.mustRevalidate(entry) else { return false }
        let requestDirectives = self.directives(request.value(forHTTPHeaderField: "Cache-Control"))
        let responseDirectives = self.directives(entry.header("Cache-Control"))
        guard
            let window = (responseDirectives["stale-if-error"] ?? requestDirectives["stale-if-error"])
                .flatMap({ Int($0) })
        else { return false }
        let staleness = self.currentAge(entry, now: now) - self.freshnessLifetime(entry, heuristics: heuristics)
        return staleness <= TimeInterval(window)
    }

    /// Whether a `200` to a `HEAD` describes the representation `entry` stores (RFC 9111 §4.3.5): each validator
    /// it sends (`ETag`, `Last-Modified`) is the stored one, and so is its `Content-Length` when both have one.
    static func headResponse(_ headers: [String: String], describes entry: CacheEntry) -> Bool {
        for name in ["ETag", "Last-Modified"] {
            if let sent = HeaderLookup.value(name, in: headers), sent != entry.header(name) { return false }
        }
        if let length = HeaderLookup.value("Content-Length", in: headers),
            let stored = entry.header("Content-Length"), length != stored
        {
            return false
        }
        return true
    }
}
