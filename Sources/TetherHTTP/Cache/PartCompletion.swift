import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request for a whole representation that completes a stored part (RFC 9111 §3.4): it goes out with a `Range`
/// for the bytes the part lacks and an `If-Range` with the part's strong validator, so that the server sends the
/// rest of that representation (`206`, combined with the part) or the whole of the current one (`200`).
struct PartCompletion {
    /// The stored part.
    var part: CacheEntry
    /// `Range` and `If-Range`.
    var headers: [(name: String, value: String)]

    /// The cache policies under which a load may use a stored part to answer its request.
    static let completingPolicies: [URLRequest.CachePolicy] = [
        .useProtocolCachePolicy, .reloadRevalidatingCacheData, .returnCacheDataElseLoad,
    ]

    /// What the stored entry does for `request`: any entry but a part is the stored entry still; a part
    /// (``StoredPart``) stays the stored entry only when it holds the range the request asks for, and otherwise
    /// either completes itself in the request (when the request asks for the whole representation, its cache policy
    /// uses the cache, and `mayComplete`) or is as if nothing were stored.
    static func decide(
        _ stored: CacheEntry?,
        for request: URLRequest,
        mayComplete: Bool
    ) -> (stored: CacheEntry?, completion: PartCompletion?) {
        guard let part = stored, part.statusCode == 206 else { return (stored, nil) }
        switch CacheRules.use(of: part, for: request) {
        case .answers:
            return (part, nil)
        case .completes(let missing, let validator):
            guard mayComplete, Self.completingPolicies.contains(request.cachePolicy),
                let length = StoredPart(part)?.length
            else { return (nil, nil) }
            let range = CacheRules.rangeFieldValue(missing, length: length)
            return (nil, PartCompletion(part: part, headers: [("Range", range), ("If-Range", validator)]))
        case .unused:
            return (nil, nil)
        }
    }

    /// Whether a request to `url` is the one that completes the part (a redirect elsewhere is not).
    func applies(to url: URL) -> Bool {
        CacheRules.key(for: self.part.url) == CacheRules.key(for: url)
    }
}
