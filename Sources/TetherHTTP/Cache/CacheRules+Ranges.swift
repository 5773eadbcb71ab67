import Foundation

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

    /// A complete stored response (`200`) as a `206 Partial Content` of the one byte range `range` asks for, with its
    /// `Content-Range` and `Content-Length` (RFC 9110 §15.3.7); nil when the entry is not complete or the range is
    /// not one satisfiable byte range (the complete response is then served, as a server that ignores `Range`).
    static func partialResponse(_ entry: CacheEntry, range: String) -> CacheEntry? {
        guard entry.statusCode == 200, let bytes = self.byteRange(range, length: entry.body.count) else { return nil }
        var partial = entry
        partial.statusCode = 206
        partial.headers = entry.headers.filter {
            !HeaderLookup.namesMatch($0.key, "Content-Length") && !HeaderLookup.namesMatch($0.key, "Content-Range")
        }
        partial.headers["Content-Range"] = "bytes \(bytes.lowerBound)-\(bytes.upperBound)/\(entry.body.count)"
        partial.headers["Content-Length"] = String(bytes.count)
        let start = entry.body.startIndex
        partial.body = Data(entry.body[(start + bytes.lowerBound)...(start + bytes.upperBound)])
        return partial
    }
}
