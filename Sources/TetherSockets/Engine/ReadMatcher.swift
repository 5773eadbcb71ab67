import NIOCore

/// Matches reads against buffered bytes without consuming them.
///
/// A value type so that tests can drive it with no I/O; `scanned` remembers how far a separator search got, so
/// that a stream arriving in many chunks is searched once, not once per chunk.
struct ReadMatcher: Equatable {
    var kind: ReadKind
    /// How many leading bytes are known to hold no complete separator.
    private(set) var scanned = 0

    init(kind: ReadKind) {
        self.kind = kind
    }

    mutating func match(_ buffer: ByteBuffer) -> ReadMatch {
        let readable = buffer.readableBytes
        switch kind {
        case .available(let maxLength):
            guard readable > 0 else { return .incomplete(bytesDone: 0) }
            return .complete(count: maxLength > 0 ? min(readable, maxLength) : readable)
        case .length(let length):
            return readable >= length ? .complete(count: length) : .incomplete(bytesDone: readable)
        case .separator(let separator, let maxLength):
            let limit = maxLength > 0 ? min(readable, maxLength) : readable
            if let end = Self.findEnd(of: separator, in: buffer, from: scanned, upTo: limit) {
                return .complete(count: end)
            }
            // A match may still end at `limit + …` once more bytes arrive: keep the last separator.count - 1 bytes.
            scanned = max(scanned, limit - separator.count + 1)
            if maxLength > 0 && readable >= maxLength { return .maxedOut }
            return .incomplete(bytesDone: limit)
        }
    }

    /// The offset just past the first occurrence of `separator` that starts at or after `start` and ends at or
    /// before `limit`, in the readable bytes of `buffer`.
    static func findEnd(of separator: [UInt8], in buffer: ByteBuffer, from start: Int, upTo limit: Int) -> Int? {
        let count = separator.count
        guard count > 0, limit - start >= count else { return nil }
        return buffer.withUnsafeReadableBytes { bytes -> Int? in
            let first = separator[0]
            var index = start
            let lastStart = limit - count
            while index <= lastStart {
                guard let found = bytes[index...lastStart].firstIndex(of: first) else { return nil }
                var matched = true
                var offset = 1
                while offset < count {
                    if bytes[found + offset] != separator[offset] {
                        matched = false
                        break
                    }
                    offset += 1
                }
                if matched { return found + count }
                index = found + 1
            }
            return nil
        }
    }
}
