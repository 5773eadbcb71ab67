import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One stored response: status, headers, body, when it was received and the request headers named by `Vary`.
struct CacheEntry: Codable, Sendable {
    var url: URL
    var statusCode: Int
    var headers: [String: String]
    var body: Data
    var requestDate: Date
    var responseDate: Date
    var varyValues: [String: String]
    var storagePolicy: Int
    /// The protocol version the response arrived with; nil in entries stored before it was kept (HTTP/1.1).
    var httpVersion: String? = nil
    /// True when a shared cache keeps the entry (``HTTPResponseCache/isPrivate`` false): its freshness then follows
    /// `s-maxage` and `proxy-revalidate`. Set by the cache when it stores the entry.
    var isInSharedCache: Bool? = nil

    var cost: Int {
        self.body.count + self.headers.reduce(256) { $0 + $1.key.utf8.count + $1.value.utf8.count }
    }

    func header(_ name: String) -> String? {
        HeaderLookup.value(name, in: self.headers)
    }

    func makeResponse() -> HTTPURLResponse {
        VersionedHTTPURLResponse(
            url: self.url,
            statusCode: self.statusCode,
            version: self.httpVersion ?? "HTTP/1.1",
            headerFields: self.headers
        )!
    }

    /// The response as a load delivers it from the cache: with an `Age` of its current age in whole seconds, which
    /// a cache must send (RFC 9111 §5.1); the stored headers keep the `Age` it arrived with.
    func makeServedResponse(now: Date) -> HTTPURLResponse {
        var served = self
        if let existing = served.headers.keys.first(where: { HeaderLookup.namesMatch($0, "Age") }) {
            served.headers.removeValue(forKey: existing)
        }
        served.headers["Age"] = String(Int(max(0, CacheRules.currentAge(self, now: now)).rounded(.down)))
        return served.makeResponse()
    }

    func makeCachedURLResponse() -> CachedURLResponse {
        CachedURLResponse(
            response: self.makeResponse(),
            data: self.body,
            userInfo: nil,
            storagePolicy: URLCache.StoragePolicy(rawValue: UInt(self.storagePolicy)) ?? .allowed
        )
    }

    var hasValidators: Bool { self.header("ETag") != nil || self.header("Last-Modified") != nil }

    /// Headers refreshed by a 304 or by a 200 to a `HEAD` (RFC 9111 §4.3.4, §4.3.5): every header of the response
    /// replaces the stored one, except the framing headers that describe that response itself, and
    /// `Content-Encoding` when the stored body is not encoded (it was decoded when it arrived, so no coding describes
    /// it any more).
    mutating func refresh(with headers: [String: String], requestDate: Date, responseDate: Date) {
        var excluded: Set<String> = ["content-length", "transfer-encoding", "connection"]
        if self.header("Content-Encoding") == nil { excluded.insert("content-encoding") }
        for (name, value) in headers where !excluded.contains(name.lowercased()) {
            if let existing = self.headers.keys.first(where: { HeaderLookup.namesMatch($0, name) }) {
                self.headers.removeValue(forKey: existing)
            }
            self.headers[name] = value
        }
        self.requestDate = requestDate
        self.responseDate = responseDate
    }
}

/// Case-insensitive header access for `[String: String]` header dictionaries.
enum HeaderLookup {
    static func value(_ name: String, in headers: [String: String]) -> String? {
        if let exact = headers[name] { return exact }
        return headers.first(where: { self.namesMatch($0.key, name) })?.value
    }

    /// Header names are ASCII tokens (RFC 9110 §5.1): they compare byte by byte, ignoring ASCII case, without
    /// Foundation's locale-aware comparison.
    static func namesMatch(_ lhs: String, _ rhs: String) -> Bool {
        var left = lhs.utf8.makeIterator()
        var right = rhs.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case (let a?, let b?):
                if a == b { continue }
                let lowerA = (a >= 0x41 && a <= 0x5A) ? a | 0x20 : a
                let lowerB = (b >= 0x41 && b <= 0x5A) ? b | 0x20 : b
                if lowerA != lowerB { return false }
            default: return false
            }
        }
    }
}
