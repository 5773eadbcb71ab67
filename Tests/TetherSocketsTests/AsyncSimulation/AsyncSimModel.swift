import TetherSockets

/// How one simulated operation ended.
enum AsyncSimOutcome: Sendable, CustomStringConvertible {
    case bytes([UInt8])
    /// `readAvailable` returned nil (the end of the stream).
    case endOfStream
    case written
    case failed(Failure)
    /// A `frames` read: the frames it took, then the failure that ended it, if any.
    case frames([[UInt8]], Failure?)

    enum Failure: Sendable, Equatable {
        case timeout, cancelled, maxedOut, closed, badParam
        case other(String)
    }

    init(error: any Error) {
        if error is CancellationError {
            self = .failed(.cancelled)
            return
        }
        guard let error = error as? GCDAsyncSocketError else {
            self = .failed(.other("\(error)"))
            return
        }
        switch error.code {
        case .readTimeout, .writeTimeout: self = .failed(.timeout)
        case .readMaxedOut: self = .failed(.maxedOut)
        case .closed: self = .failed(.closed)
        case .badParam: self = .failed(.badParam)
        default: self = .failed(.other("\(error)"))
        }
    }

    var description: String {
        switch self {
        case .bytes(let bytes): "\(bytes.count) bytes"
        case .endOfStream: "nil"
        case .written: "written"
        case .frames(let frames, let failure): "\(frames.count) frames\(failure.map { " then \($0)" } ?? "")"
        case .failed(let failure): "\(failure)"
        }
    }
}

/// The model of the connection's read side: the offset of the next byte of the stream no read took. A round's
/// successful reads must tile the stream from there, in some order (they were served one at a time in an order the
/// tasks cannot observe), each a valid answer to its kind; failed reads take nothing.
struct AsyncSimModel {
    let stream: SimulatedStream
    private(set) var offset = 0
    private(set) var violations: [String] = []
    /// Each write's round and size, by id.
    private(set) var writes: [(round: Int, size: Int)] = []

    /// The delimiter codec's `maxLength` (the frame without its delimiter).
    static let frameMaximum = 65_536

    init(stream: SimulatedStream) {
        self.stream = stream
    }

    mutating func violation(_ text: String) {
        violations.append("at offset \(offset): \(text)")
    }

    /// A new write's id.
    mutating func issueWrite(round: Int, size: Int) -> Int {
        writes.append((round, size))
        return writes.count - 1
    }

    var writtenBytes: Int { writes.reduce(0) { $0 + $1.size } }

    /// Checks a round's outcomes against what each operation was allowed to do, and advances past its reads.
    mutating func settle(_ operations: [AsyncSimSchedule.Operation], _ outcomes: [AsyncSimOutcome]) {
        let readCount = operations.filter { if case .read = $0 { true } else { false } }.count
        var slices: [(AsyncSimSchedule.Read, [UInt8])] = []
        for (operation, outcome) in zip(operations, outcomes) {
            switch (operation, outcome) {
            case (.read(.bad, _, _), .failed(.badParam)), (.write, .written):
                break
            case (.read(.bad, _, _), _):
                violation("\(operation) answered \(outcome), not badParam")
            case (.read(let read, _, _), .bytes(let bytes)):
                slices.append((read, bytes))
            case (
                .read(.frames(let separator, let count), let timeout, let cancelled), .frames(let frames, let failure)
            ):
                slices += frames.map { (.separator(separator, maxLength: Self.frameMaximum + separator.count), $0) }
                switch failure {
                case nil: if frames.count != count { violation("\(operation) ended after \(frames.count) frames") }
                case .timeout?: if !timeout.isShort { violation("\(operation) timed out") }
                case .cancelled?: if !cancelled { violation("\(operation) threw CancellationError, never cancelled") }
                default: violation("\(operation) answered \(outcome)")
                }
            case (.read(_, let timeout, _), .failed(.timeout)), (.write(_, let timeout, _), .failed(.timeout)):
                if !timeout.isShort { violation("\(operation) timed out") }
            case (.read(_, _, let cancelled), .failed(.cancelled)), (.write(_, _, let cancelled), .failed(.cancelled)):
                if !cancelled { violation("\(operation) threw CancellationError, never cancelled") }
            case (.read(.separator(_, let max), _, _), .failed(.maxedOut)):
                if readCount == 1, stream.separatorEnd(from: offset, limit: offset + max) != nil {
                    violation("\(operation) maxed out with a separator within \(max) bytes")
                }
            default:
                violation("\(operation) answered \(outcome)")
            }
        }
        guard let end = tile(slices, from: offset, used: Array(repeating: false, count: slices.count)) else {
            return violation(
                "the round's reads (\(slices.map { "\($0.0)=\($0.1.count)" })) do not tile the stream from here"
            )
        }
        offset = end
    }

    /// A single read's outcome, which must be `expected` (a stall's reads, whose answer is certain).
    mutating func settle(_ read: AsyncSimSchedule.Read, _ outcome: AsyncSimOutcome, expected: String) {
        switch outcome {
        case .bytes(let bytes) where expected == "bytes":
            if let end = tile([(read, bytes)], from: offset, used: [false]) {
                offset = end
            } else {
                violation("\(read) returned \(bytes.count) bytes that are not the stream's from here")
            }
        case .failed(let failure) where "\(failure)" == expected:
            break
        case .endOfStream where expected == "nil":
            break
        default:
            violation("\(read) answered \(outcome), expected \(expected)")
        }
    }

    /// Where the stream ends after the unused slices, laid from `offset` in some order; nil when none fits.
    private func tile(_ slices: [(AsyncSimSchedule.Read, [UInt8])], from offset: Int, used: [Bool]) -> Int? {
        guard used.contains(false) else { return offset }
        for index in slices.indices where !used[index] && fits(slices[index].0, slices[index].1, at: offset) {
            var next = used
            next[index] = true
            if let end = tile(slices, from: offset + slices[index].1.count, used: next) { return end }
        }
        return nil
    }

    /// Whether `bytes` are the stream's at `offset` and a valid answer to `read` there.
    private func fits(_ read: AsyncSimSchedule.Read, _ bytes: [UInt8], at offset: Int) -> Bool {
        switch read {
        case .length(let length): guard bytes.count == length else { return false }
        case .available(let max): guard (1...max).contains(bytes.count) else { return false }
        case .separator(_, let max):
            guard stream.separatorEnd(from: offset, limit: offset + max) == offset + bytes.count else { return false }
        case .bad, .frames: return false
        }
        for (index, byte) in bytes.enumerated() where stream.byte(at: offset + index) != byte { return false }
        return true
    }

    /// Checks what the peer received: every byte correct; each write once, in the order of the rounds that issued
    /// them; with `complete`, every write, whole.
    mutating func checkReceived(_ record: AsyncSimPeerRecord, complete: Bool) {
        let parser = record.parser
        if let problem = parser.problem { violation("the peer received: \(problem)") }
        var seen = Set<Int>()
        var lastRound = -1
        for id in parser.ids {
            guard id < writes.count, seen.insert(id).inserted else {
                violation("the peer received write \(id) twice or unasked")
                break
            }
            if writes[id].round < lastRound {
                violation("write \(id) (round \(writes[id].round)) arrived after a write of round \(lastRound)")
            }
            lastRound = max(lastRound, writes[id].round)
        }
        guard complete else { return }
        if seen.count != writes.count || !parser.atBoundary || parser.received != writtenBytes {
            violation(
                "the peer received \(parser.received) bytes, \(seen.count) writes; \(writtenBytes) bytes in "
                    + "\(writes.count) writes were accepted"
            )
        }
    }
}
