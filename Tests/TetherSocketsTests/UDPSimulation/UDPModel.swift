import Foundation
import NIOCore

/// What a ``UDPSchedule`` is owed by a ``GCDAsyncUdpSocket``, built operation by operation as the schedule runs, and
/// the checker of what the delegate and the peers saw.
///
/// Lives: the socket is bound before the schedule (life 1); `close` and `closeAfterSending` end the current life
/// when it has sockets (one `udpSocketDidClose` each); the next send or `enableBroadcast` starts a new one.
struct UDPModel {
    struct Send {
        var tag: Int
        var size: Int
        var to: UDPSchedule.Target
        var life: Int
        /// A `close()` came after it in its life: it may be dropped without a callback (and then never arrives).
        var mayBeDropped = false
    }

    private(set) var sends: [Int: Send] = [:]
    private(set) var emptySends: Set<Int> = []
    private(set) var peerSent: [Int: Int] = [:]
    private(set) var closesOwed = 0
    private(set) var firstLifeOpen = true
    private var life = 1
    private var hasSockets = true

    mutating func apply(_ op: UDPSchedule.Op) {
        switch op {
        case .send(let tag, let size, let to, _, _):
            guard size > 0 else {
                emptySends.insert(tag)
                return
            }
            startLifeIfNeeded()
            sends[tag] = Send(tag: tag, size: size, to: to, life: life)
        case .peerSend(let sequence, let size):
            if firstLifeOpen { peerSent[sequence] = size }
        case .receive: break
        case .broadcast: startLifeIfNeeded()
        case .closeAfterSending: endLife(dropping: false)
        case .close: endLife(dropping: true)
        }
    }

    /// A race send issued (``UDPRace``): its result, if any, is the race checker's; the peer it went to may get it
    /// only when it was reported sent.
    mutating func raced(_ send: UDPRace.Send) {
        sends[send.tag] = Send(tag: send.tag, size: send.size, to: send.to, life: .max, mayBeDropped: true)
    }

    /// Lives the race started (each ends with one `udpSocketDidClose`).
    mutating func racedLives(_ count: Int) {
        closesOwed += count
    }

    private mutating func startLifeIfNeeded() {
        guard !hasSockets else { return }
        hasSockets = true
        life += 1
    }

    private mutating func endLife(dropping: Bool) {
        guard hasSockets else { return }
        if dropping {
            for (tag, send) in sends where send.life == life { sends[tag]?.mayBeDropped = true }
        }
        if life == 1 { firstLifeOpen = false }
        hasSockets = false
        closesOwed += 1
    }

    /// The sends owed exactly one result.
    var owedExactlyOne: Set<Int> { Set(sends.values.filter { !$0.mayBeDropped }.map(\.tag)) }

    /// How many of `owed` (a multiset) are not in `got`.
    static func missing(_ owed: [Data], from got: [Data]) -> Int {
        var arrived: [Data: Int] = [:]
        for data in got { arrived[data, default: 0] += 1 }
        var missing = 0
        for data in owed {
            if let count = arrived[data], count > 0 { arrived[data] = count - 1 } else { missing += 1 }
        }
        return missing
    }

    /// The sends reported sent, by destination.
    func reportedSent(_ events: [UdpEvent]) -> [UDPSchedule.Target: [Int]] {
        var result: [UDPSchedule.Target: [Int]] = [:]
        for event in events {
            if case .sent(let tag) = event, let send = sends[tag] { result[send.to, default: []].append(tag) }
        }
        return result
    }

    /// Send results: exactly one for each send not dropped by a close, at most one otherwise, none for an empty
    /// send; in tag order; each before the close of its life. Closes: exactly one per life. Received datagrams:
    /// intact peer datagrams, each once; all of them when life 1 never closed.
    func check(_ events: [UdpEvent]) -> [String] {
        var problems: [String] = []
        var results: [Int: Int] = [:]
        var lastTag = 0
        var closesSeen = 0
        var delivered: [Int: Int] = [:]
        for (index, event) in events.enumerated() {
            switch event {
            case .sent(let tag), .notSent(let tag, _, _):
                results[tag, default: 0] += 1
                // A race's threads send at once: their order is the race checker's.
                if tag < UDPRace.firstTag {
                    if tag < lastTag { problems.append("event \(index): result of tag \(tag) after tag \(lastTag)") }
                    lastTag = max(lastTag, tag)
                }
                if emptySends.contains(tag) { problems.append("an empty send (tag \(tag)) got a callback") }
                if case .notSent(_, let code, let errno) = event {
                    // Loopback refuses none of these (an unconnected socket ignores the closed port's ICMP) and
                    // never backs up: any failure is a defect.
                    let reason = "code \(code.map(String.init) ?? "nil"), errno \(errno.map { "\($0)" } ?? "-")"
                    problems.append("tag \(tag) not sent: \(reason)")
                }
                if let send = sends[tag], send.life <= closesSeen {
                    problems.append("tag \(tag) of life \(send.life) reported after that life's close")
                }
            case .closed: closesSeen += 1
            case .received(let data, _, _):
                guard data.count >= 8 else {
                    problems.append("a received datagram of \(data.count) bytes")
                    continue
                }
                let sequence = Int(data.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
                if data != UDPSchedule.payload(tag: sequence, size: data.count) {
                    problems.append("datagram #\(sequence) arrived altered (\(data.count) bytes)")
                }
                delivered[sequence, default: 0] += 1
            default: break
            }
        }
        for tag in owedExactlyOne where results[tag] != 1 {
            problems.append("tag \(tag): \(results[tag] ?? 0) results, owed exactly one")
        }
        for (tag, count) in results where count > 1 { problems.append("tag \(tag): \(count) results") }
        if closesSeen != closesOwed { problems.append("\(closesSeen) closes for \(closesOwed) lives") }
        for (sequence, count) in delivered where count > 1 {
            problems.append("datagram #\(sequence) delivered \(count) times")
        }
        // When life 1 closed during the schedule, its datagrams may have been dropped with it.
        if firstLifeOpen {
            for sequence in peerSent.keys where delivered[sequence] == nil {
                problems.append("datagram #\(sequence) never delivered")
            }
        }
        return problems
    }

    /// A peer received only datagrams reported sent to it, intact, each at most as often as it was sent; what is
    /// missing is at most what its kernel dropped. A send with no result (a `close()` dropped it) or reported NOT
    /// sent never arrives: as in the original, whose sends and `close()` take turns on one queue, a datagram the
    /// kernel took is reported sent before `udpSocketDidClose`, even when the `close()` ran on another thread.
    func checkPeer(_ name: String, got: [ByteBuffer], reportedSent: [Int], drops: Int) -> [String] {
        var owed: [Data: Int] = [:]
        for tag in reportedSent {
            if let send = sends[tag] { owed[UDPSchedule.payload(tag: tag, size: send.size), default: 0] += 1 }
        }
        var problems: [String] = []
        for buffer in got {
            let data = Data(buffer.readableBytesView)
            guard let count = owed[data], count > 0 else {
                problems.append("peer \(name) got \(data.count) bytes never reported sent to it")
                continue
            }
            owed[data] = count - 1
        }
        let missing = owed.values.reduce(0, +)
        if missing > drops { problems.append("peer \(name): \(missing) reported sent never arrived, \(drops) dropped") }
        return problems
    }
}
