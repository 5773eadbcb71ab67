import Foundation
import TetherSockets

/// What a ``UDPSocketSchedule`` is owed by a ``UDPSocket``, built as the schedule runs, and the checker of what the
/// sends answered, what the peers got and what the consumer received.
struct UDPSocketModel {
    enum Result: CustomStringConvertible {
        case sent
        case threw(any Error)

        var description: String {
            switch self {
            case .sent: "sent"
            case .threw(let error): "threw \(error)"
            }
        }
    }

    typealias Send = UDPSocketSchedule.Send

    private(set) var isClosed = false
    /// The datagrams peer A sent to the socket while it was open: number → size.
    private(set) var peerSent: [Int: Int] = [:]
    private(set) var results: [Int: (send: Send, result: Result, closedBefore: Bool, closing: Bool)] = [:]

    mutating func closed() { isClosed = true }

    mutating func peerSent(_ sequence: Int, size: Int) { peerSent[sequence] = size }

    /// Records send `send`'s answer; `closing`: a `close()` ran concurrently with its burst.
    mutating func record(_ send: Send, _ result: Result, closing: Bool) {
        results[send.sequence] = (send, result, isClosed, closing)
    }

    /// A send answers: sent, or a typed error that says why. Before any close and not cancelled: sent (loopback
    /// takes every size here, and an unconnected socket ignores the closed port's refusal). After `close()`:
    /// `.closed`. Racing a `close()`: sent or `.closed`. Cancelled: sent, or `CancellationError`/`.closed`.
    func checkSends() -> [String] {
        var problems: [String] = []
        for (sequence, entry) in results.sorted(by: { $0.key < $1.key }) {
            let closedError: Bool
            let cancellation: Bool
            switch entry.result {
            case .sent:
                if entry.closedBefore { problems.append("#\(sequence) sent after close()") }
                continue
            case .threw(let error):
                closedError = (error as? GCDAsyncSocketError)?.code == .closed
                cancellation = error is CancellationError
            }
            let allowed: Bool
            if entry.closedBefore {
                allowed = closedError || (entry.send.cancelled && cancellation)
            } else if entry.send.cancelled {
                allowed = cancellation || (entry.closing && closedError)
            } else {
                allowed = entry.closing && closedError
            }
            if !allowed { problems.append("#\(sequence) (\(entry.send)): \(entry.result)") }
        }
        return problems
    }

    /// The payloads reported sent to `target`.
    func owed(to target: UDPSocketSchedule.Target) -> [Data] {
        results.values.filter { $0.send.to == target }.compactMap { entry in
            guard case .sent = entry.result else { return nil }
            return UDPSocketSchedule.payload(entry.send.sequence, size: entry.send.size)
        }
    }

    /// How many of `owed` (a multiset) are not in `got`; and what `got` holds beyond `owed`.
    static func compare(owed: [Data], got: [Data]) -> (missing: Int, extra: [Data]) {
        var remaining: [Data: Int] = [:]
        for data in owed { remaining[data, default: 0] += 1 }
        var extra: [Data] = []
        for data in got {
            if let count = remaining[data], count > 0 { remaining[data] = count - 1 } else { extra.append(data) }
        }
        return (remaining.values.reduce(0, +), extra)
    }

    /// A peer got only datagrams whose send returned, each once and intact; a send that threw never arrives; what
    /// is missing is at most what the peer's kernel dropped.
    func checkPeer(_ name: String, _ target: UDPSocketSchedule.Target, got: [Data], drops: Int) -> [String] {
        let (missing, extra) = Self.compare(owed: owed(to: target), got: got)
        var problems: [String] = []
        for data in extra { problems.append("peer \(name) got \(data.count) bytes no returned send sent it") }
        if missing > drops { problems.append("peer \(name): \(missing) sent never arrived, \(drops) dropped") }
        return problems
    }

    /// The consumer received only datagrams peer A sent while the socket was open, each once and intact; with
    /// `complete`, all of them but at most `drops`. Without `contents`, only which ones arrived (a drain's check:
    /// the end checks every datagram's bytes once).
    func checkReceived(_ received: [Data], drops: Int, complete: Bool, contents: Bool = true) -> [String] {
        var problems: [String] = []
        var seen: [Int: Int] = [:]
        for data in received {
            guard data.count >= 8 else {
                problems.append("received \(data.count) bytes")
                continue
            }
            let sequence = Int(data.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            guard let size = peerSent[sequence] else {
                problems.append("received #\(sequence), never sent to the socket while open")
                continue
            }
            if contents, data != UDPSocketSchedule.payload(sequence, size: size) {
                problems.append("#\(sequence) altered")
            }
            seen[sequence, default: 0] += 1
        }
        for (sequence, count) in seen where count > 1 { problems.append("#\(sequence) received \(count) times") }
        let missing = peerSent.keys.filter { seen[$0] == nil }.count
        if complete, missing > drops { problems.append("\(missing) datagrams never received, \(drops) dropped") }
        return problems
    }
}
