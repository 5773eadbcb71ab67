import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CacheRules {
    /// The single byte range a `Range` field asks for of a representation of `length` bytes (RFC 9110 §14.1.2):
    /// `bytes=first-last`, `bytes=first-` or `bytes=-suffix`, the last position cut to the end; nil for any other
    /// unit, a list of ranges, a malformed or an unsatisfiable one.
    static func byteRange(_ value: String, length: Int) -> ClosedRange<Int>? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.count > 6, trimmed.prefix(6).lowercased() == "bytes=" else { return nil }
        let spec = trimmed.dropFirst(6).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let firstText = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let lastText = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        let isDigits = { (text: String) in !text.isEmpty && text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
        guard length > 0 else { return nil }
        if firstText.isEmpty {
            guard isDigits(lastText), let suffix = Int(lastText), suffix > 0 else { return nil }
            return max(0, length - suffix)...(length - 1)
        }
        guard isDigits(firstText), let first = Int(firstText), first < length else { return nil }
        if lastText.isEmpty { return first...(length - 1) }
        guard isDigits(lastText), let last = Int(lastText), last >= first else { return nil }
        return first...min(last, length - 1)
    }

    /// A stored response as a `206 Partial Content` of the one byte range `range` asks for, with its `Content-Range`
    /// and `Content-Length` (RFC 9110 §15.3.7): of a complete response (`200`), or of a stored part
    /// (``StoredPart``) that holds all of that range. Nil when the range is not one satisfiable byte range (a complete
    /// response is then served whole, as a server that ignores `Range`), or when the entry is neither or lacks some of
    /// the range.
    static func partialResponse(_ entry: CacheEntry, range: String) -> CacheEntry? {
        let held: StoredPart
        if entry.statusCode == 200 {
            guard !entry.body.isEmpty else { return nil }
            held = StoredPart(range: 0...(entry.body.count - 1), length: entry.body.count)
        } else if let part = StoredPart(entry) {
            held = part
        } else {
            return nil
        }
        guard let bytes = self.byteRange(range, length: held.length), held.range.contains(bytes.lowerBound),
            held.range.contains(bytes.upperBound)
        else { return nil }
        var partial = entry
        partial.statusCode = 206
        partial.headers = entry.headers.filter {
            !HeaderLookup.namesMatch($0.key, "Content-Length") && !HeaderLookup.namesMatch($0.key, "Content-Range")
        }
        partial.headers["Content-Range"] = StoredPart(range: bytes, length: held.length).contentRange
        partial.headers["Content-Length"] = String(bytes.count)
        let start = entry.body.startIndex - held.range.lowerBound
        partial.body = Data(entry.body[(start + bytes.lowerBound)...(start + bytes.upperBound)])
        return partial
    }

    /// `entry` as it answers `request` (RFC 9110 §14.2, §13.1.5): the one byte range a `GET`'s `Range` asks for
    /// (``partialResponse(_:range:)``) when the request has no `If-Range` or one that names the entry's strong
    /// validator; otherwise the entry itself.
    static func answer(_ entry: CacheEntry, to request: URLRequest) -> CacheEntry {
        guard let range = request.value(forHTTPHeaderField: "Range"), HTTPLoad.method(of: request) == "GET" else {
            return entry
        }
        if let ifRange = request.value(forHTTPHeaderField: "If-Range"), !self.ifRangeMatches(ifRange, entry) {
            return entry
        }
        return self.partialResponse(entry, range: range) ?? entry
    }
}
