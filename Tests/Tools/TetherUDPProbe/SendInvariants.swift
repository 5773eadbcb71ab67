// Scenarios on a rate-limited v0 (a tbf qdisc), where sends back up and the kernel answers EAGAIN:
//   timedout-never-leaves: datagrams reported timed out never reach the wire; those reported sent all do.
//   refused-while-queued: refusals (EACCES, ENETUNREACH) of datagrams that waited fail those sends alone.
import Dispatch
import Foundation
import TetherSockets

#if canImport(Glibc)
import Glibc
#endif

/// A packet socket on v1 that sees every IPv4 packet v0 puts on the wire (the veth peer receives them all, whatever
/// their destination), so the probe counts what actually left, not what the faces reported.
final class WireTap: Sendable {
    let fd: Int32

    init(interface: String) throws {
        let protocolIP = UInt16(0x0800).bigEndian  // ETH_P_IP
        fd = socket(AF_PACKET, Int32(SOCK_DGRAM.rawValue), Int32(protocolIP))
        guard fd >= 0 else { throw ProbeFailure("packet socket: errno \(errno)") }
        // struct sockaddr_ll (20 bytes), which Glibc's module does not export: family, protocol, interface index,
        // then hardware fields left zero.
        var address = [UInt8](repeating: 0, count: 20)
        withUnsafeBytes(of: UInt16(AF_PACKET)) { address.replaceSubrange(0..<2, with: $0) }
        withUnsafeBytes(of: protocolIP) { address.replaceSubrange(2..<4, with: $0) }
        withUnsafeBytes(of: Int32(if_nametoindex(interface))) { address.replaceSubrange(4..<8, with: $0) }
        let bound = address.withUnsafeBytes {
            bind(fd, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count))
        }
        guard bound == 0 else { throw ProbeFailure("bind packet socket: errno \(errno)") }
        var limit = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Packets the tap itself dropped (its receive buffer was full), since the last call: `PACKET_STATISTICS`.
    /// A packet counted here went out on the wire although the tap did not see it.
    func drops() -> Int {
        // struct tpacket_stats { unsigned tp_packets; unsigned tp_drops; }; SOL_PACKET = 263, PACKET_STATISTICS = 6.
        var stats: (UInt32, UInt32) = (0, 0)
        var length = socklen_t(MemoryLayout<(UInt32, UInt32)>.size)
        guard getsockopt(fd, 263, 6, &stats, &length) == 0 else { return 0 }
        return Int(stats.1)
    }

    /// The tags (first 4 bytes of the UDP payload, big-endian) of UDP packets to `port`, until the one tagged `last`
    /// arrives; throws after 10 s without a packet.
    func tags(toPort port: UInt16, until last: UInt32) throws -> [UInt32] {
        var seen: [UInt32] = []
        var packet = [UInt8](repeating: 0, count: 2_048)
        while true {
            let count = packet.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw ProbeFailure("the wire went quiet before tag \(last): saw \(seen)") }
            let headerLength = Int(packet[0] & 0x0F) * 4
            guard packet[9] == 17, count >= headerLength + 12 else { continue }
            let udp = headerLength
            guard UInt16(packet[udp + 2]) << 8 | UInt16(packet[udp + 3]) == port else { continue }
            let tag = packet[(udp + 8)..<(udp + 12)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            seen.append(tag)
            if tag == last { return seen }
        }
    }
}

/// `size` bytes starting with `tag`, big-endian.
func tagged(_ tag: UInt32, size: Int = 1_400) -> Data {
    var data = Data([UInt8(tag >> 24), UInt8(tag >> 16 & 0xFF), UInt8(tag >> 8 & 0xFF), UInt8(tag & 0xFF)])
    data.append(Data(repeating: 0x55, count: size - 4))
    return data
}

/// The result of every tag in `tags`: "sent", "timeout" or the error.
func results(_ events: Events, count: Int) async throws -> [Int: String] {
    var outcome: [Int: String] = [:]
    while outcome.count < count {
        let (tag, result): (Int, String) = try await events.next("a send result") { event in
            switch event {
            case .sent(let tag): return (tag, "sent")
            case .notSent(let tag, let error):
                if error?.code == .sendTimeout { return (tag, "timeout") }
                return (tag, error?.posixErrorCode.map { "\($0)" } ?? "\(error.map { "\($0)" } ?? "nil")")
            default: return nil
            }
        }
        guard outcome[tag] == nil else { throw ProbeFailure("tag \(tag) reported twice") }
        outcome[tag] = result
    }
    return outcome
}

/// Datagrams reported timed out never leave; every datagram reported sent does.
func timedOutNeverLeaves() async throws -> String {
    let tap = try WireTap(interface: "v1")
    let events = Events()
    let sender = events.socket()
    sender.setIPv6Enabled(false)
    sender.setMaxSendBufferSize(16_384)
    try sender.bind(toPort: 0, interface: "10.77.0.1")
    let count = 40
    for tag in 1...count {
        sender.send(tagged(UInt32(tag)), toHost: "10.77.0.99", port: 9, withTimeout: 0.05, tag: tag)
    }
    let outcome = try await results(events, count: count)
    // The last datagram waits behind everything that left: when it is on the wire, so is every earlier one.
    let marker = UInt32(10_000)
    sender.send(tagged(marker), toHost: "10.77.0.99", port: 9, withTimeout: -1, tag: Int(marker))
    let seen = try await onThread { try tap.tags(toPort: 9, until: marker) }.dropLast()
    let reportedSent = Set(outcome.filter { $0.value == "sent" }.keys.map(UInt32.init))
    let timedOut = Set(outcome.filter { $0.value == "timeout" }.keys.map(UInt32.init))
    guard reportedSent.count + timedOut.count == count else { throw ProbeFailure("other results: \(outcome)") }
    guard !timedOut.isEmpty else { throw ProbeFailure("nothing timed out: the rate limit did not bite") }
    let leaked = timedOut.intersection(seen)
    guard leaked.isEmpty else { throw ProbeFailure("reported timed out, yet on the wire: \(leaked.sorted())") }
    // What the tap missed is in its own drop count (see `WireTap.drops()`).
    let tapDrops = tap.drops()
    guard Set(seen).isSubset(of: reportedSent), seen.count == Set(seen).count,
        reportedSent.count - seen.count <= tapDrops
    else {
        throw ProbeFailure("on the wire \(seen), reported sent \(reportedSent.sorted()), the tap dropped \(tapDrops)")
    }
    guard !sender.isClosed() else { throw ProbeFailure("the socket closed") }
    sender.close()
    return "\(reportedSent.count) reported sent = \(seen.count) on the wire, \(timedOut.count) timed out, none left"
}

/// Refusals of datagrams that waited for room (EACCES: broadcast without SO_BROADCAST; ENETUNREACH: no route) fail
/// those sends only; the socket stays open and the next datagram goes out.
func refusedWhileQueued() async throws -> String {
    let tap = try WireTap(interface: "v1")
    let events = Events()
    let sender = events.socket()
    sender.setIPv6Enabled(false)
    sender.setMaxSendBufferSize(16_384)
    try sender.bind(toPort: 0, interface: "10.77.0.1")
    let backlog = 20
    for tag in 1...backlog {
        sender.send(tagged(UInt32(tag)), toHost: "10.77.0.99", port: 9, withTimeout: -1, tag: tag)
    }
    sender.send(tagged(100), toHost: "10.77.0.255", port: 9, withTimeout: -1, tag: 100)
    sender.send(tagged(101), toHost: "192.0.2.1", port: 9, withTimeout: -1, tag: 101)
    sender.send(tagged(102), toHost: "10.77.0.99", port: 9, withTimeout: -1, tag: 102)
    let outcome = try await results(events, count: backlog + 3)
    guard outcome[100] == "EACCES", outcome[101] == "ENETUNREACH", outcome[102] == "sent" else {
        throw ProbeFailure("tags 100–102: \(outcome[100] ?? "-"), \(outcome[101] ?? "-"), \(outcome[102] ?? "-")")
    }
    let seen = try await onThread { try tap.tags(toPort: 9, until: 102) }
    guard !seen.contains(100), !sender.isClosed() else {
        throw ProbeFailure("seen \(seen), closed: \(sender.isClosed())")
    }
    let queued = outcome.values.filter { $0 == "sent" }.count
    sender.close()
    return "EACCES and ENETUNREACH failed alone, \(queued) sent, socket open"
}

/// Runs `body` on a thread of its own (it blocks).
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}
