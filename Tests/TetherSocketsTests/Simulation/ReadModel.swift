import Foundation
import TetherSockets

/// The reference model of the delegate face's read and write contract over a simulated stream: which read is owed
/// which bytes, in which order, and which closes are allowed when. A value type with no I/O; the drivers feed it
/// what the socket reports and it collects every violation.
struct ReadModel {
    /// What the read at an offset is owed, given how much of the stream can ever arrive.
    enum Outcome: Equatable {
        /// Exactly this many bytes.
        case complete(Int)
        /// At least one byte, at most `maxLength` (0 = no cap).
        case someBytes(maxLength: Int)
        /// The separator is not within the maximum: the socket closes with `.readMaxedOut`.
        case maxedOut
        /// More bytes than will ever arrive.
        case needsMore
    }

    let stream: SimulatedStream
    /// How many bytes the peer will send in all; nil while unbounded.
    var limit: Int?
    private(set) var reads: [SocketSchedule.Read] = []
    private(set) var completed = 0
    private(set) var offset = 0
    private(set) var writes: [Int] = []
    private(set) var writesCompleted = 0
    private(set) var writtenBytes = 0
    private(set) var completedWriteBytes = 0
    private(set) var violations: [String] = []

    init(stream: SimulatedStream, limit: Int?) {
        self.stream = stream
        self.limit = limit
    }

    var pendingReads: Int { reads.count - completed }
    var pendingWrites: Int { writes.count - writesCompleted }

    mutating func violation(_ text: String) {
        if violations.count < 20 { violations.append(text) }
    }

    /// Issues a read; returns its tag.
    mutating func issue(_ read: SocketSchedule.Read) -> Int {
        reads.append(read)
        return reads.count - 1
    }

    /// Issues a write of `size` bytes; returns its tag and its bytes.
    mutating func issueWrite(size: Int) -> (tag: Int, bytes: Data) {
        let start = writtenBytes
        let bytes = Data(
            [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
                for index in 0..<size { buffer[index] = SimulatedStream.written(at: start + index) }
                count = size
            }
        )
        writtenBytes += size
        writes.append(size)
        return (writes.count - 1, bytes)
    }

    func outcome(of read: SocketSchedule.Read, at offset: Int) -> Outcome {
        let available = limit.map { $0 - offset }
        switch read {
        case .available(let max, _):
            return available.map { $0 >= 1 } ?? true ? .someBytes(maxLength: max) : .needsMore
        case .length(let length, _):
            return available.map { $0 >= length } ?? true ? .complete(length) : .needsMore
        case .separator(_, let max):
            var searchLimit = limit ?? Int.max
            if max > 0 { searchLimit = min(searchLimit, offset + max) }
            if searchLimit == Int.max { searchLimit = offset + 1 << 24 }
            if let end = stream.separatorEnd(from: offset, limit: searchLimit) { return .complete(end - offset) }
            if max > 0, available.map({ $0 >= max }) ?? true { return .maxedOut }
            return .needsMore
        }
    }

    /// The outcome owed to the current read (the oldest not completed), if any.
    var current: (tag: Int, outcome: Outcome)? {
        guard completed < reads.count else { return nil }
        return (completed, outcome(of: reads[completed], at: offset))
    }

    /// A read completed with `data` (what the callback got; `buffer`: the caller's buffer and offset).
    mutating func didRead(tag: Int, data: Data, buffer: (NSMutableData, Int)?) {
        guard tag == completed, tag < reads.count else {
            violation("read tag \(tag) completed when \(completed) was next (\(reads.count) issued)")
            return
        }
        let owed = outcome(of: reads[tag], at: offset)
        switch owed {
        case .complete(let length) where data.count == length: break
        case .someBytes(let max) where data.count >= 1 && (max == 0 || data.count <= max): break
        default: violation("read \(tag) \(reads[tag]) at \(offset) got \(data.count) bytes, owed \(owed)")
        }
        if !stream.matches(data, at: offset) {
            violation("read \(tag) at \(offset) got bytes that are not the stream's there (\(mismatch(data)))")
        }
        if let (storage, at) = buffer {
            let stored =
                storage.length >= at + data.count
                ? Data(storage.subdata(with: NSRange(location: at, length: data.count))) : Data()
            if stored != data { violation("read \(tag)'s bytes are not in its buffer at \(at)") }
        }
        completed += 1
        offset += data.count
    }

    /// Where `data` (read at `offset`) first differs from the stream, and where in the stream its first bytes are.
    private func mismatch(_ data: Data) -> String {
        let expected = stream.bytes(offset..<offset + data.count)
        let first = zip(data, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? 0
        let probe = Array(data.prefix(24))
        let window = max(0, offset - 200_000)..<(offset + 200_000)
        let found = probe.count < 8 ? nil : window.first { stream.bytes($0..<$0 + probe.count) == probe }
        return "first wrong byte at +\(first); its first \(probe.count) bytes are the stream's at "
            + (found.map(String.init) ?? "no offset nearby")
    }

    mutating func didWrite(tag: Int) {
        guard tag == writesCompleted, tag < writes.count else {
            violation("write tag \(tag) completed when \(writesCompleted) was next (\(writes.count) issued)")
            return
        }
        completedWriteBytes += writes[tag]
        writesCompleted += 1
    }

    /// The close's leftover bytes are the stream's, from the first byte no read took.
    mutating func checkUnread(_ unread: Data?) {
        guard let unread, !unread.isEmpty else { return }
        if !stream.matches(unread, at: offset) {
            violation("the close's \(unread.count) unread bytes are not the stream's from \(offset)")
        }
    }

    /// The socket closed with `error`; `requested`: the driver asked for a close (or a timeout) of its own.
    mutating func didClose(error: GCDAsyncSocketError?, requested: Bool, timedOutTag: Int?) {
        checkUnread(error?.unreadData)
        guard let error else {
            if !requested { violation("closed without an error although nothing asked for it") }
            return
        }
        switch error.code {
        case .closed:
            guard let limit else { return violation("closed by the peer, which never closes") }
            if let current, current.outcome != .needsMore {
                violation("closed by the peer while read \(current.tag) was owed \(current.outcome)")
            } else if current == nil && offset != limit {
                violation("closed by the peer with \(limit - offset) bytes no read was issued for")
            }
            if let unread = error.unreadData, unread.count != limit - offset {
                violation("the close carries \(unread.count) unread bytes, \(limit - offset) were left")
            }
        case .readMaxedOut:
            if current?.outcome != .maxedOut {
                violation("maxed out while read \(String(describing: current)) was owed")
            }
        case .readTimeout:
            if timedOutTag == nil || current?.tag != timedOutTag {
                violation(
                    "read timeout for read \(String(describing: current?.tag)), expected \(String(describing: timedOutTag))"
                )
            }
        default:
            violation("closed with \(error)")
        }
    }
}
