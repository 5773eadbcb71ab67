import NIOCore

/// Event-loop delivery of one life's callbacks: they run on the loop one after another, in the order they were
/// produced, and never inside one another. A callback produced while another runs (a send's result, when the
/// delegate sends from `didReceive`) runs right after it, before the loop handles its next event: so a send's
/// `didSend` still comes before the reply to that datagram, as on the delegate queue.
// Sendable: `pending` and `isRunning` are touched in `run` only, which runs on `loop` (checked there).
final class UDPLoopCallbacks: @unchecked Sendable {
    let loop: any EventLoop
    private var pending = CircularBuffer<() -> Void>()
    private var isRunning = false

    init(loop: any EventLoop) {
        self.loop = loop
    }

    /// On the loop: runs `callback` now and returns true when no callback is running (nor waiting); false, without
    /// running it, when one is (then ``run(_:)`` queues it behind). Not kept, so not allocated.
    func runInline(_ callback: () -> Void) -> Bool {
        loop.preconditionInEventLoop()
        guard !isRunning else { return false }
        isRunning = true
        callback()
        while let next = pending.popFirst() { next() }
        isRunning = false
        return true
    }

    /// On the loop: runs `callback` now, or after the callbacks already running or waiting.
    func run(_ callback: @escaping () -> Void) {
        loop.preconditionInEventLoop()
        pending.append(callback)
        guard !isRunning else { return }
        isRunning = true
        while let next = pending.popFirst() { next() }
        isRunning = false
    }
}
