import Foundation
import NIOHTTP1

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPLoad {
    /// The methods that change nothing on the server (RFC 9110 §9.2.1): their responses invalidate no cache entry.
    static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]

    /// `request` as `hop` sent it, from the engine request's headers: the cookies and the credential Tether added.
    static func requestAsSent(
        _ request: URLRequest,
        outgoing headers: HTTPHeaders,
        hop: HTTPLoadMachine.Hop
    ) -> URLRequest {
        var sent = request
        let cookies = headers["Cookie"]
        sent.setValue(cookies.isEmpty ? nil : cookies.joined(separator: "; "), forHTTPHeaderField: "Cookie")
        if let (name, value) = hop.authorization { sent.setValue(value, forHTTPHeaderField: name) }
        return sent
    }

    /// Invalidates what a non-error response to an unsafe request makes stale (RFC 9111 §4.4): the request's URL
    /// and the same-origin URLs in `Location` and `Content-Location`. Done for every hop, so that an unsafe request
    /// whose redirect is followed (a POST answered with 303) invalidates as much as one that is not.
    static func invalidate(
        _ cache: HTTPResponseCache,
        after hop: HTTPLoadMachine.Hop,
        status: Int,
        headers: [String: String]
    ) {
        guard !Self.safeMethods.contains(hop.method), status < 400 else { return }
        cache.remove(key: CacheRules.key(for: hop.url))
        for target in CacheRules.invalidatedURLs(after: hop.url, headers: headers) {
            cache.remove(key: CacheRules.key(for: target))
        }
    }
}
