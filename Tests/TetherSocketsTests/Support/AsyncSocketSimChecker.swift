import Foundation
import TetherSockets

/// The randomized test's reference model and checker: from the schedule (which calls were admitted, in which
/// order) and the stream, it predicts what each completed read must hold, and checks the callbacks against it.
struct AsyncSocketSimChecker {
    typealias Schedule = AsyncSocketSimSchedule
    typealias Event = AsyncSocketSimDelegate.Event

    let schedule: Schedule
    /// The steps the socket admitted (valid, issued before any disconnect call), in the order issued.
    let admitted: [Schedule.Step]
    /// The stream's bytes the peer sent.
    let sent: Int
    let received: Data
    let events: [Event]
    private(set) var problems: [String] = []

    init(schedule: Schedule, issued: [Schedule.Step], sent: Int, received: Data, events: [Event]) {
        self.schedule = schedule
        self.sent = sent
        self.received = received
        self.events = events
        var admitted: [Schedule.Step] = []
        for step in issued {
            switch step.operation {
            case .read(let read, _) where read.isValid: admitted.append(step)
            case .write(let count, _) where count > 0: admitted.append(step)
            default: break
            }
            if step.operation.endsIO { break }
        }
        self.admitted = admitted
    }

    private func stream(_ range: Range<Int>) -> Data {
        Schedule.stream(range, seed: schedule.seed)
    }

    /// Where separator `sep` ends at or after `position`.
    private func separatorEnd(_ sep: Data, from position: Int) -> Int {
        var index = position
        while true {
            if stream(index..<index + sep.count) == sep { return index + sep.count }
            index += 1
        }
    }

    mutating func check() -> [String] {
        let reads = admitted.filter { if case .read = $0.operation { true } else { false } }
        let writes = admitted.filter { if case .write = $0.operation { true } else { false } }
        var position = 0
        var readIndex = 0
        var writeIndex = 0
        for (index, event) in events.enumerated() {
            switch event {
            case .connected:
                if index != 0 { problems.append("connected at \(index)") }
            case .read(let tag, let data, let buffer):
                guard readIndex < reads.count, reads[readIndex].tag == tag else {
                    problems.append(
                        "read #\(tag) completed; the next owed was \(readIndex < reads.count ? "#\(reads[readIndex].tag)" : "none")"
                    )
                    return problems
                }
                guard case .read(let read, _) = reads[readIndex].operation else { return problems }
                readIndex += 1
                let expected = expectedBytes(read, at: position, got: data.count)
                if data != expected {
                    problems.append(
                        "read #\(tag) (\(read)) at \(position): got \(Array(data.prefix(80))), owed \(Array(expected.prefix(80)))"
                    )
                    return problems
                }
                if let spec = read.buffer, let buffer {
                    let offset = Int(spec.offset)
                    let written =
                        buffer.count >= offset + data.count ? buffer.subdata(in: offset..<offset + data.count) : Data()
                    if written != data || buffer.prefix(offset) != Data(repeating: 0xEE, count: offset) {
                        problems.append("read #\(tag): the buffer holds \(Array(buffer)), not the bytes at \(offset)")
                    }
                }
                position += data.count
            case .partialRead(let tag, _):
                guard readIndex < reads.count, reads[readIndex].tag == tag,
                    case .read(let read, _) = reads[readIndex].operation
                else {
                    problems.append("partialRead #\(tag) is not for the head read")
                    continue
                }
                if case .available = read { problems.append("partialRead #\(tag) for a read of what is available") }
            case .wrote(let tag):
                guard writeIndex < writes.count, writes[writeIndex].tag == tag else {
                    problems.append("write #\(tag) completed out of order")
                    return problems
                }
                writeIndex += 1
            case .partialWrite(let tag):
                if !(writeIndex < writes.count && writes[writeIndex].tag == tag) {
                    problems.append("partialWrite #\(tag) is not for the head write")
                }
            case .timeoutAsked:
                break
            case .willDisconnect(let error, let unread):
                if index != events.count - 2 { problems.append("willDisconnect is not just before didDisconnect") }
                checkClose(
                    error,
                    unread: unread,
                    position: position,
                    head: reads.dropFirst(readIndex).first,
                    headWrite: writes.dropFirst(writeIndex).first
                )
            case .disconnected:
                if index != events.count - 1 { problems.append("events after didDisconnect") }
            }
        }
        if events.filter({ if case .disconnected = $0 { true } else { false } }).count != 1 {
            problems.append("not exactly one didDisconnect")
        }
        checkWrites(writes)
        return problems
    }

    /// The bytes read `read` owes at `position` (`count`: what an available read took).
    private func expectedBytes(_ read: Schedule.Read, at position: Int, got count: Int) -> Data {
        switch read {
        case .available(let max, _):
            guard count > 0, max == 0 || count <= Int(max) else { return Data([0xFF]) }
            return stream(position..<position + count)
        case .length(let n, _):
            return stream(position..<position + Int(n))
        case .separator(let sep, let max, _):
            let end = separatorEnd(sep, from: position)
            if max > 0 && end - position > Int(max) { return Data([0xFF]) }
            return stream(position..<end)
        }
    }

    private mutating func checkClose(
        _ error: NSError?,
        unread: Data?,
        position: Int,
        head: Schedule.Step?,
        headWrite: Schedule.Step?
    ) {
        let unreadBytes = unread ?? Data()
        if position + unreadBytes.count > sent || unreadBytes != stream(position..<position + unreadBytes.count) {
            problems.append("unreadData is not the stream's next \(unreadBytes.count) bytes at \(position)")
        }
        guard let error else {
            if schedule.ending != .halfClose { problems.append("a clean close without the peer's end") }
            if position + unreadBytes.count != sent {
                problems.append(
                    "unreadData holds \(unreadBytes.count) bytes; \(sent - position) were sent and not read"
                )
            }
            return
        }
        switch (error.domain, error.code) {
        case (AsyncSocketErrorDomain, AsyncSocketError.Code.readTimeoutError.rawValue):
            if case .read(_, let timeout)? = head?.operation, timeout == 0 { return }
            problems.append("a read timeout, but the head read had no zero timeout")
        case (AsyncSocketErrorDomain, AsyncSocketError.Code.writeTimeoutError.rawValue):
            if case .write(_, let timeout)? = headWrite?.operation, timeout == 0 { return }
            problems.append("a write timeout, but the head write had no zero timeout")
        case (AsyncSocketErrorDomain, AsyncSocketError.Code.readMaxedOutError.rawValue):
            if case .read(.separator(let sep, let max, _), _)? = head?.operation, max > 0,
                separatorEnd(sep, from: position) - position > Int(max)
            {
                return
            }
            problems.append("maxed out, but the model says the head read fits")
        case (NSPOSIXErrorDomain, _):
            if schedule.ending != .reset { problems.append("a POSIX error (\(error.code)) without a reset") }
        default:
            problems.append("an unexpected close: \(error.domain) \(error.code)")
        }
    }

    private mutating func checkWrites(_ writes: [Schedule.Step]) {
        var owed = Data()
        for step in writes {
            guard case .write(let count, _) = step.operation else { continue }
            owed.append(contentsOf: (0..<count).map { Schedule.writeByte(tag: step.tag, index: $0) })
            if owed.count >= received.count { break }
        }
        if received.count > owed.count || owed.prefix(received.count) != received {
            problems.append("the peer received \(received.count) bytes that are not a prefix of the writes")
        }
    }
}
