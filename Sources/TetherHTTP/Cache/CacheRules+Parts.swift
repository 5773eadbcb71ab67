import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CacheRules {
    /// The strong validator of a response (RFC 9110 §8.8.1), as `If-Range` would carry it: its entity tag unless it
    /// is weak or unquoted; without an entity tag, its `Last-Modified` when its `Date` is at least a second later
    /// (RFC 9110 §8.8.2.2). Nil otherwise: then no part of it may be combined with another (RFC 9111 §3.4).
    static func strongValidator(_ headers: [String: String]) -> String? {
        if let tag = HeaderLookup.value("ETag", in: headers)?.trimmingCharacters(in: .whitespaces) {
            return tag.count >= 2 && tag.hasPrefix("\"") && tag.hasSuffix("\"") ? tag : nil
        }
        guard let text = HeaderLookup.value("Last-Modified", in: headers)?.trimmingCharacters(in: .whitespaces),
            let modified = HTTPDate.parse(text),
            let date = self.parseDate(HeaderLookup.value("Date", in: headers)),
            date.timeIntervalSince(modified) >= 1
        else { return nil }
        return text
    }

    /// Whether the response has a content coding: its bytes are not the representation's, and ranges of it do not
    /// combine with ranges of a decoded one.
    static func isEncoded(_ headers: [String: String]) -> Bool {
        guard let coding = HeaderLookup.value("Content-Encoding", in: headers)?.trimmingCharacters(in: .whitespaces)
        else { return false }
        return !coding.isEmpty && coding.lowercased() != "identity"
    }

    /// Whether a `206` may be stored (RFC 9111 §3.3): its `Content-Range` names one range of a known length, it has a
    /// strong validator (without one it could never be combined with another part, nor completed) and no content
    /// coding. The other rules of ``isStorable(request:statusCode:headers:isShared:)`` apply too.
    static func isStorablePart(_ headers: [String: String]) -> Bool {
        guard let value = HeaderLookup.value("Content-Range", in: headers),
            let part = StoredPart(contentRange: value)
        else { return false }
        if let length = HeaderLookup.value("Content-Length", in: headers), Int(length) != part.range.count {
            return false
        }
        return self.strongValidator(headers) != nil && !self.isEncoded(headers)
    }

    /// Whether an `If-Range` value names `entry`'s representation (RFC 9110 §13.1.5): it is the entry's strong
    /// validator, compared strongly.
    static func ifRangeMatches(_ value: String, _ entry: CacheEntry) -> Bool {
        self.strongValidator(entry.headers) == value.trimmingCharacters(in: .whitespaces)
    }

    /// What the stored part `entry` can do for `request`: answer the one byte range a `GET` asks for when it holds
    /// all of it (and any `If-Range` names it), or complete itself for a `GET` of the whole representation without
    /// conditions of its own when it lacks one range at its start or end. ``StoredPart/Use/unused`` for an entry that
    /// is not a part.
    static func use(of entry: CacheEntry, for request: URLRequest) -> StoredPart.Use {
        guard let part = StoredPart(entry), HTTPLoad.method(of: request) == "GET",
            let validator = self.strongValidator(entry.headers)
        else { return .unused }
        if let range = request.value(forHTTPHeaderField: "Range") {
            if let ifRange = request.value(forHTTPHeaderField: "If-Range"), !self.ifRangeMatches(ifRange, entry) {
                return .unused
            }
            guard let bytes = self.byteRange(range, length: part.length), part.range.contains(bytes.lowerBound),
                part.range.contains(bytes.upperBound)
            else { return .unused }
            return .answers
        }
        let conditions = ["If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since", "If-Range"]
        guard !part.isComplete, !conditions.contains(where: { request.value(forHTTPHeaderField: $0) != nil }) else {
            return .unused
        }
        if part.range.lowerBound == 0 {
            return .completes(missing: (part.range.upperBound + 1)...(part.length - 1), ifRange: validator)
        }
        if part.range.upperBound == part.length - 1 {
            return .completes(missing: 0...(part.range.lowerBound - 1), ifRange: validator)
        }
        return .unused
    }

    /// The `Range` value that asks for `missing` of a representation of `length` bytes: open-ended when it runs to
    /// the end.
    static func rangeFieldValue(_ missing: ClosedRange<Int>, length: Int) -> String {
        missing.upperBound == length - 1
            ? "bytes=\(missing.lowerBound)-" : "bytes=\(missing.lowerBound)-\(missing.upperBound)"
    }

    /// The stored response `stored` combined with the new `206` `new` (RFC 9111 §3.4): one part, or the complete
    /// response (a `200`) when together they hold the whole representation. Nil unless both have the same strong
    /// validator, neither has a content coding, both describe a representation of the same length, and the two
    /// parts meet or overlap: parts of two representations are never combined. A complete stored response with the
    /// same validator keeps its body and takes the new headers. The new response's header fields replace the stored
    /// ones, except `Content-Range` and `Content-Length`, which describe the combination.
    static func combine(_ stored: CacheEntry, with new: CacheEntry) -> CacheEntry? {
        guard let newPart = StoredPart(new), let validator = self.strongValidator(new.headers),
            self.strongValidator(stored.headers) == validator, !self.isEncoded(new.headers),
            !self.isEncoded(stored.headers)
        else { return nil }
        var combined = stored
        let held: ClosedRange<Int>
        if stored.statusCode == 200 {
            guard stored.body.count == newPart.length else { return nil }
            held = 0...(newPart.length - 1)
        } else {
            guard let storedPart = StoredPart(stored), storedPart.length == newPart.length,
                newPart.range.lowerBound <= storedPart.range.upperBound + 1,
                storedPart.range.lowerBound <= newPart.range.upperBound + 1
            else { return nil }
            let lower = min(storedPart.range.lowerBound, newPart.range.lowerBound)
            held = lower...max(storedPart.range.upperBound, newPart.range.upperBound)
            var body = Data(capacity: held.count)
            let start = stored.body.startIndex
            if storedPart.range.lowerBound < newPart.range.lowerBound {
                body.append(stored.body[start..<(start + newPart.range.lowerBound - storedPart.range.lowerBound)])
            }
            body.append(new.body)
            if storedPart.range.upperBound > newPart.range.upperBound {
                let tail = storedPart.range.upperBound - newPart.range.upperBound
                body.append(stored.body[(stored.body.endIndex - tail)...])
            }
            combined.body = body
        }
        let fresh = new.headers.filter { !HeaderLookup.namesMatch($0.key, "Content-Range") }
        combined.refresh(with: fresh, requestDate: new.requestDate, responseDate: new.responseDate)
        combined.headers = combined.headers.filter {
            !HeaderLookup.namesMatch($0.key, "Content-Range") && !HeaderLookup.namesMatch($0.key, "Content-Length")
        }
        let part = StoredPart(range: held, length: newPart.length)
        if part.isComplete {
            combined.statusCode = 200
        } else {
            combined.statusCode = 206
            combined.headers["Content-Range"] = part.contentRange
        }
        combined.headers["Content-Length"] = String(held.count)
        combined.varyValues = new.varyValues
        combined.storagePolicy = max(stored.storagePolicy, new.storagePolicy)
        combined.httpVersion = new.httpVersion ?? stored.httpVersion
        return combined
    }

    /// A stored `206` that holds the whole representation, as the complete response (`200`) it is; any other entry
    /// as it is.
    static func completed(_ entry: CacheEntry) -> CacheEntry {
        guard let part = StoredPart(entry), part.isComplete else { return entry }
        var complete = entry
        complete.statusCode = 200
        complete.headers = entry.headers.filter { !HeaderLookup.namesMatch($0.key, "Content-Range") }
        return complete
    }
}
