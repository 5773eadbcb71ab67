import Foundation
import TetherSockets

/// The RunLoop-era face's events, streamed from its run loop.
final class RunLoopEvents: AsyncUdpSocketDelegate {
    enum Event: Sendable {
        case sent(Int)
        case notSent(Int, domain: String, code: Int)
        case closed
    }

    let stream: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream()
    }

    func onUdpSocket(_ sock: AsyncUdpSocket, didSendDataWithTag tag: Int) { continuation.yield(.sent(tag)) }
    func onUdpSocket(_ sock: AsyncUdpSocket, didNotSendDataWithTag tag: Int, dueToError error: (any Error)?) {
        let nsError = error.map { $0 as NSError }
        continuation.yield(.notSent(tag, domain: nsError?.domain ?? "", code: nsError?.code ?? 0))
    }
    func onUdpSocketDidClose(_ sock: AsyncUdpSocket) { continuation.yield(.closed) }
}

// Sendable: the stream's continuation is thread-safe; the delegate has no other state.
extension RunLoopEvents: @unchecked Sendable {}

/// Makes an ``AsyncUdpSocket`` on a thread of its own whose run loop runs until the process exits.
func makeRunLoopSocket(delegate: RunLoopEvents) -> AsyncUdpSocket {
    final class Handoff: @unchecked Sendable {
        // Sendable: written by the thread before `ready` is signalled, read after waiting for it.
        var socket: AsyncUdpSocket?
        let ready = DispatchSemaphore(value: 0)
    }
    let handoff = Handoff()
    let thread = Thread {
        handoff.socket = AsyncUdpSocket(delegate: delegate)
        handoff.ready.signal()
        let keepAlive = Timer(timeInterval: 1e9, repeats: true) { _ in }
        RunLoop.current.add(keepAlive, forMode: .default)
        while true { _ = RunLoop.current.run(mode: .default, before: .distantFuture) }
    }
    thread.start()
    handoff.ready.wait()
    return handoff.socket!
}

/// The RunLoop-era face (`AsyncUdpSocket`) on the throttled v0 of `sendtimeout`: sends the kernel cannot take time
/// out with `didNotSendDataWithTag` code 4 in AsyncUdpSocketErrorDomain, and the socket stays open.
func runLoopSendTimeout() async throws -> String {
    let events = RunLoopEvents()
    let sender = makeRunLoopSocket(delegate: events)
    try sender.bind(toAddress: "10.77.0.1", port: 0)
    let payload = Data(repeating: 0x55, count: 1_400)
    let count = 80
    for tag in 1...count {
        guard sender.send(payload, toHost: "10.77.0.99", port: 9, withTimeout: 0.1, tag: tag) else {
            throw ProbeFailure("send \(tag) was refused")
        }
    }
    var sentCount = 0
    var timedOut = 0
    var iterator = events.stream.makeAsyncIterator()
    while sentCount + timedOut < count {
        switch await iterator.next() {
        case .sent: sentCount += 1
        case .notSent(_, let domain, let code) where domain == AsyncUdpSocketErrorDomain && code == 4: timedOut += 1
        case .notSent(let tag, let domain, let code):
            throw ProbeFailure("send \(tag) failed otherwise: \(domain) \(code)")
        case .closed, nil: throw ProbeFailure("closed before every send was answered")
        }
    }
    guard timedOut > 0, sentCount > 0 else {
        throw ProbeFailure(
            "expected some sends to complete and some to time out: \(sentCount) sent, \(timedOut) timed out"
        )
    }
    guard !sender.isClosed() else { throw ProbeFailure("the socket closed after a send timeout") }
    sender.close()
    guard case .closed = await iterator.next() else { throw ProbeFailure("no DidClose after close") }
    return "\(sentCount) sent, \(timedOut) timed out (code 4), socket open until close()"
}
