import Foundation

/// A download's decisions on a response, with no I/O: whether the body starts the file, continues the partial file,
/// or whether the partial file must go and the whole resource be asked for again.
enum DownloadResumeRules {
    /// A resumption: the rest of the body from `offset`, if the resource is still the version `validator` names.
    struct Attempt: Sendable, Hashable {
        var offset: Int64
        var validator: DownloadResumeData.Validator
        var expectedLength: Int64?
    }

    /// What to do with a response.
    enum Decision: Sendable, Hashable {
        /// Write the body into an empty file (a fresh download, or a 200 answering a resumption: the whole body).
        case writeFromStart(expectedLength: Int64?)
        /// Append the body to the partial file, after its first `offset` bytes.
        case append(offset: Int64, expectedLength: Int64?)
        /// Discard the partial file and ask for the whole resource again.
        case restart(reason: String)
        /// Not a body to save: fail, and keep the partial file of a resumption.
        case reject(status: Int)
    }

    /// The decision on a response with `status` and `headers` to a fresh download (`attempt` nil) or a resumption.
    static func decide(status: Int, headers: [String: String], attempt: Attempt?) -> Decision {
        let contentLength = HeaderLookup.value("Content-Length", in: headers).flatMap { Int64($0) }
        guard let attempt else {
            return (200..<300).contains(status)
                ? .writeFromStart(expectedLength: contentLength) : .reject(status: status)
        }
        switch status {
        case 206:
            return self.decidePartial(headers: headers, contentLength: contentLength, attempt: attempt)
        case 416:
            return .restart(reason: "the server cannot serve bytes from \(attempt.offset) on (416)")
        case 200..<300:
            return .writeFromStart(expectedLength: contentLength)
        default:
            return .reject(status: status)
        }
    }

    private static func decidePartial(headers: [String: String], contentLength: Int64?, attempt: Attempt) -> Decision {
        guard let rangeValue = HeaderLookup.value("Content-Range", in: headers),
            let range = self.contentRange(rangeValue)
        else {
            return .restart(reason: "the 206 response has no byte Content-Range")
        }
        guard range.first == attempt.offset else {
            return .restart(reason: "the 206 response starts at byte \(range.first), not \(attempt.offset)")
        }
        if let total = range.total {
            if let expected = attempt.expectedLength, expected != total {
                return .restart(reason: "the resource is \(total) bytes long now, not \(expected)")
            }
        }
        if let contentLength, contentLength != range.last - range.first + 1 {
            return .restart(reason: "the 206 response's Content-Length does not match its Content-Range")
        }
        if let encoding = HeaderLookup.value("Content-Encoding", in: headers), encoding.lowercased() != "identity" {
            return .restart(reason: "the 206 response is encoded (\(encoding))")
        }
        // A server that ignores If-Range but honours Range would splice another version onto the partial file.
        if let validator = self.validator(in: headers).validator, validator != attempt.validator {
            return .restart(reason: "the resource changed (\(validator.ifRangeValue))")
        }
        return .append(offset: attempt.offset, expectedLength: range.total ?? attempt.expectedLength)
    }

    /// The validator a download records from a response's headers (a strong `ETag`, else `Last-Modified`), or why
    /// there is none.
    static func validator(in headers: [String: String]) -> (validator: DownloadResumeData.Validator?, reason: String?) {
        if let encoding = HeaderLookup.value("Content-Encoding", in: headers),
            !encoding.isEmpty, encoding.lowercased() != "identity"
        {
            return (nil, "the body was encoded (\(encoding)): byte ranges would count the encoded bytes")
        }
        let tag = HeaderLookup.value("ETag", in: headers)?.trimmingCharacters(in: .whitespaces)
        if let tag, tag.hasPrefix("\""), tag.hasSuffix("\""), tag.count >= 2 {
            return (.entityTag(tag), nil)
        }
        if let date = HeaderLookup.value("Last-Modified", in: headers)?.trimmingCharacters(in: .whitespaces),
            HTTPDate.parse(date) != nil
        {
            return (.lastModified(date), nil)
        }
        if let tag, tag.hasPrefix("W/") {
            return (nil, "the response's ETag is weak (\(tag)) and it has no Last-Modified: a range of it is not safe")
        }
        return (nil, "the response has no strong ETag and no Last-Modified")
    }

    /// `bytes first-last/total` (total `*` when unknown), or nil when it is not that.
    static func contentRange(_ value: String) -> (first: Int64, last: Int64, total: Int64?)? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = trimmed.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let halves = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let bounds = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first >= 0,
            last >= first
        else { return nil }
        if halves[1] == "*" { return (first, last, nil) }
        guard let total = Int64(halves[1]), total > last else { return nil }
        return (first, last, total)
    }
}
