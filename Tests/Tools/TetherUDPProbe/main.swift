// TetherUDPProbe: run by TetherSocketsTests inside a network namespace that the test creates (`unshare -rn`) with a
// veth pair v0 (10.77.0.1/24) ↔ v1 (10.77.0.2/24), routes 224.0.0.0/4 via v0, accept_local on (v1 receives what
// v0, a local address, sends), and IPv6 duplicate-address detection off. Each scenario uses both UDP faces and prints one line:
//   PASS <scenario>: <what was seen>      or      FAIL <scenario>: <why>
// then exits 0 (pass) or 1 (fail).
//
//   TetherUDPProbe broadcast | multicast4 | multicast6 | sendtimeout | runloop-sendtimeout | timedout-never-leaves
//                  | refused-while-queued
//
// sendtimeout expects a tbf qdisc on v0 that holds packets (rate 8kbit, a 10 MB limit): datagrams stay charged to
// the sender's socket, its send buffer fills, the kernel answers EAGAIN, and the send timer runs.
import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import TetherSockets

#if canImport(Glibc)
import Glibc
#endif

/// A delegate that streams every event.
final class Events: GCDAsyncUdpSocketDelegate, @unchecked Sendable {
    enum Event: Sendable {
        case sent(Int)
        case notSent(Int, GCDAsyncUdpSocketError?)
        case received(Data)
        case closed
    }

    let queue = DispatchQueue(label: "probe.udp")
    let stream: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream()
    }

    func socket() -> GCDAsyncUdpSocket { GCDAsyncUdpSocket(delegate: self, delegateQueue: queue) }

    func udpSocket(_ sock: GCDAsyncUdpSocket, didSendDataWithTag tag: Int) { continuation.yield(.sent(tag)) }
    func udpSocket(_ sock: GCDAsyncUdpSocket, didNotSendDataWithTag tag: Int, dueToError error: (any Error)?) {
        continuation.yield(.notSent(tag, error as? GCDAsyncUdpSocketError))
    }
    func udpSocket(
        _ sock: GCDAsyncUdpSocket,
        didReceive data: Data,
        fromAddress address: Data,
        withFilterContext filterContext: Any?
    ) { continuation.yield(.received(data)) }
    func udpSocketDidClose(_ sock: GCDAsyncUdpSocket, withError error: (any Error)?) { continuation.yield(.closed) }

    /// The next event that `match` accepts, within 10 s.
    func next<T: Sendable>(_ what: String, _ match: @escaping @Sendable (Event) -> T?) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask {
                for await event in self.stream { if let value = match(event) { return value } }
                throw ProbeFailure("stream ended waiting for \(what)")
            }
            group.addTask {
                try await Task.sleep(for: .seconds(10))
                throw ProbeFailure("timed out waiting for \(what)")
            }
            let value = try await group.next()!
            group.cancelAll()
            return value
        }
    }
}

struct ProbeFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The next datagram on the async face, within 10 s.
func nextDatagram(_ socket: UDPSocket, _ what: String = "a datagram") async throws -> String {
    try await withThrowingTaskGroup(of: String.self) { group in
        group.addTask {
            for try await datagram in socket.datagrams { return String(buffer: datagram.data) }
            throw ProbeFailure("datagrams ended")
        }
        group.addTask {
            try await Task.sleep(for: .seconds(10))
            throw ProbeFailure("timed out waiting for \(what)")
        }
        let value = try await group.next()!
        group.cancelAll()
        return value
    }
}

func received(_ events: Events, _ what: String = "a datagram") async throws -> String {
    try await events.next(what) {
        if case .received(let data) = $0 { String(decoding: data, as: UTF8.self) } else { nil }
    }
}

func sent(_ events: Events, tag: Int) async throws {
    let error: GCDAsyncUdpSocketError?? = try await events.next("send \(tag)") { event in
        switch event {
        case .sent(let t) where t == tag: return .some(nil)
        case .notSent(let t, let error) where t == tag: return .some(error)
        default: return nil
        }
    }
    if let error = error ?? nil { throw ProbeFailure("send \(tag) failed: \(error)") }
}

/// Broadcast both ways between the faces: delegate → async, async → delegate.
func broadcast() async throws -> String {
    let asyncReceiver = try await UDPSocket.bind(host: "0.0.0.0", port: 0)
    let events = Events()
    let sender = events.socket()
    try sender.bind(toPort: 0, interface: "10.77.0.1")
    try sender.enableBroadcast(true)
    sender.send(
        Data("hello, subnet".utf8),
        toHost: "10.77.0.255",
        port: UInt16(asyncReceiver.localPort),
        withTimeout: 5,
        tag: 1
    )
    try await sent(events, tag: 1)
    let first = try await nextDatagram(asyncReceiver)

    let delegateEvents = Events()
    let delegateReceiver = delegateEvents.socket()
    try delegateReceiver.bind(toPort: 0)
    try delegateReceiver.beginReceiving()
    let asyncSender = try await UDPSocket.bind(host: "10.77.0.1", port: 0)
    do {
        try await asyncSender.send(
            ByteBuffer(string: "refused"),
            toHost: "10.77.0.255",
            port: Int(delegateReceiver.localPort())
        )
        throw ProbeFailure("a broadcast without the option was sent")
    } catch let error as GCDAsyncSocketError where error.posixErrorCode == .EACCES {}
    try await asyncSender.setBroadcastEnabled(true)
    try await asyncSender.send(
        ByteBuffer(string: "hello back"),
        toHost: "10.77.0.255",
        port: Int(delegateReceiver.localPort())
    )
    let second = try await received(delegateEvents)
    sender.close()
    delegateReceiver.close()
    try await asyncReceiver.close()
    try await asyncSender.close()
    return "\"\(first)\" (delegate → async), \"\(second)\" (async → delegate) via 10.77.0.255"
}

/// IPv4 multicast: members joined on v1 receive what is sent out of v0; after leaving they do not.
func multicast4() async throws -> String {
    let group = "239.7.7.7"
    let memberEvents = Events()
    let member = memberEvents.socket()
    member.setIPv6Enabled(false)
    try member.bind(toPort: 0)
    try member.joinMulticastGroup(group, onInterface: "v1")
    try member.beginReceiving()
    let asyncMember = try await UDPSocket.bind(host: "0.0.0.0", port: 0)
    try await asyncMember.joinMulticastGroup(group, interface: "10.77.0.2")

    let senderEvents = Events()
    let sender = senderEvents.socket()
    sender.setIPv6Enabled(false)
    try sender.sendIPv4Multicast(onInterface: "10.77.0.1")
    sender.send(Data("to the group".utf8), toHost: group, port: member.localPort(), withTimeout: 5, tag: 1)
    try await sent(senderEvents, tag: 1)
    let delegateGot = try await received(memberEvents, "the group datagram at the delegate member")
    // The async face sends by route (224.0.0.0/4 via v0).
    let asyncSender = try await UDPSocket.bind(host: "0.0.0.0", port: 0)
    try await asyncSender.send(ByteBuffer(string: "async to the group"), toHost: group, port: asyncMember.localPort)
    let asyncGot = try await nextDatagram(asyncMember, "the group datagram at the async member")

    try member.leaveMulticastGroup(group, onInterface: "v1")
    sender.send(Data("after leaving".utf8), toHost: group, port: member.localPort(), withTimeout: 5, tag: 2)
    try await sent(senderEvents, tag: 2)
    sender.send(Data("marker".utf8), toHost: "10.77.0.2", port: member.localPort(), withTimeout: 5, tag: 3)
    try await sent(senderEvents, tag: 3)
    let afterLeaving = try await received(memberEvents)
    guard afterLeaving == "marker" else { throw ProbeFailure("received \"\(afterLeaving)\" after leaving") }
    member.close()
    sender.close()
    try await asyncMember.close()
    try await asyncSender.close()
    return "\"\(delegateGot)\" (delegate member), \"\(asyncGot)\" (async member), nothing after leaving"
}

/// IPv6 multicast delivery on a multicast-capable interface (veth): a link-local group joined on v1, sent out of v0.
func multicast6() async throws -> String {
    let group = "ff02::1:7777"
    let memberEvents = Events()
    let member = memberEvents.socket()
    member.setIPv4Enabled(false)
    try member.bind(toPort: 0)
    try member.joinMulticastGroup(group, onInterface: "v1")
    try member.beginReceiving()
    let asyncMember = try await UDPSocket.bind(host: "::", port: 0)
    try await asyncMember.joinMulticastGroup(group, interface: "v1")

    let senderEvents = Events()
    let sender = senderEvents.socket()
    sender.setIPv4Enabled(false)
    try sender.sendIPv6Multicast(onInterface: "v0")
    sender.send(Data("v6 to the group".utf8), toHost: group, port: member.localPort(), withTimeout: 5, tag: 1)
    try await sent(senderEvents, tag: 1)
    let delegateGot = try await received(memberEvents)
    sender.send(
        Data("v6 to the async member".utf8),
        toHost: group,
        port: UInt16(asyncMember.localPort),
        withTimeout: 5,
        tag: 2
    )
    try await sent(senderEvents, tag: 2)
    let asyncGot = try await nextDatagram(asyncMember)
    member.close()
    sender.close()
    try await asyncMember.close()
    return "\"\(delegateGot)\" (delegate member), \"\(asyncGot)\" (async member) on \(group)%v1"
}

/// A send that the kernel cannot take (EAGAIN: the send buffer is full of datagrams held by the qdisc) times out
/// alone; the socket stays open.
func sendTimeout() async throws -> String {
    let events = Events()
    let sender = events.socket()
    sender.setIPv6Enabled(false)
    sender.setMaxSendBufferSize(16_384)
    try sender.bind(toPort: 0, interface: "10.77.0.1")
    let payload = Data(repeating: 0x55, count: 1_400)
    let count = 30
    for tag in 1...count {
        sender.send(payload, toHost: "10.77.0.99", port: 9, withTimeout: 0.1, tag: tag)
    }
    var sentCount = 0
    var timedOut = 0
    for _ in 1...count {
        let outcome: String = try await events.next("a send result") { event in
            switch event {
            case .sent: return "sent"
            case .notSent(_, let error):
                return error?.code == .sendTimeout ? "timeout" : "\(error.map { "\($0)" } ?? "nil")"
            default: return nil
            }
        }
        switch outcome {
        case "sent": sentCount += 1
        case "timeout": timedOut += 1
        default: throw ProbeFailure("a send failed otherwise: \(outcome)")
        }
    }
    guard timedOut > 0, sentCount > 0 else {
        throw ProbeFailure(
            "expected some sends to complete and some to time out: \(sentCount) sent, \(timedOut) timed out"
        )
    }
    guard !sender.isClosed() else { throw ProbeFailure("the socket closed after a send timeout") }
    sender.close()
    _ = try await events.next("close") { if case .closed = $0 { true } else { nil } }
    return "\(sentCount) sent, \(timedOut) timed out (sendTimeout), socket open until close()"
}

let scenario = CommandLine.arguments.dropFirst().first ?? ""
let scenarios: [String: @Sendable () async throws -> String] = [
    "broadcast": broadcast, "multicast4": multicast4, "multicast6": multicast6, "sendtimeout": sendTimeout,
    "runloop-sendtimeout": runLoopSendTimeout, "timedout-never-leaves": timedOutNeverLeaves,
    "refused-while-queued": refusedWhileQueued, "cancelled-never-leaves": cancelledNeverLeaves,
]
guard let run = scenarios[scenario] else {
    print("FAIL \(scenario): unknown scenario")
    exit(64)
}
do {
    print("PASS \(scenario): \(try await run())")
    exit(0)
} catch {
    print("FAIL \(scenario): \(error)")
    exit(1)
}
