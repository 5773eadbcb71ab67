import Foundation

/// The bytes of a representation that a stored partial response (`206`) holds (RFC 9111 §3.3): one contiguous range
/// of a representation whose complete length is known.
struct StoredPart: Equatable, Sendable {
    /// The positions held, first to last (both included).
    var range: ClosedRange<Int>
    /// The complete length of the representation.
    var length: Int

    /// What a stored part can do for a request.
    enum Use: Equatable, Sendable {
        /// The request asks for one byte range wholly within the part: the part answers it.
        case answers
        /// The request asks for the whole representation, and the part lacks one range of it, at its start or at
        /// its end: the cache asks for `missing` with `If-Range: ifRange` and combines the answer with the part.
        case completes(missing: ClosedRange<Int>, ifRange: String)
        /// The part can do nothing for the request: it goes to the server as if nothing were stored.
        case unused
    }

    /// A part of `range` of a representation of `length` bytes.
    init(range: ClosedRange<Int>, length: Int) {
        self.range = range
        self.length = length
    }

    /// The part a `Content-Range` field names (RFC 9110 §14.4): `bytes first-last/length` with a known length that
    /// exceeds `last`; nil for another unit, an unknown length (`*`), an unsatisfied range (`bytes */length`) or an
    /// invalid one.
    init?(contentRange value: String) {
        guard let (first, last, total) = DownloadResumeRules.contentRange(value), let total,
            let lower = Int(exactly: first), let upper = Int(exactly: last), let length = Int(exactly: total)
        else { return nil }
        self.range = lower...upper
        self.length = length
    }

    /// The part a stored `206` holds: its `Content-Range` names one range of a known length, and its body is exactly
    /// that many bytes. Nil for any other entry, and for a `206` whose body and `Content-Range` disagree, whose bytes
    /// could not be placed in the representation.
    init?(_ entry: CacheEntry) {
        guard entry.statusCode == 206, let value = entry.header("Content-Range"),
            let part = StoredPart(contentRange: value), part.range.count == entry.body.count
        else { return nil }
        self = part
    }

    /// Whether the part holds the whole representation.
    var isComplete: Bool { self.range.lowerBound == 0 && self.range.upperBound == self.length - 1 }

    /// The `Content-Range` value of the part.
    var contentRange: String { "bytes \(self.range.lowerBound)-\(self.range.upperBound)/\(self.length)" }
}
