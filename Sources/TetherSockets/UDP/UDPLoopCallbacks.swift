import NIOCore
import TetherConcurrency

/// Event-loop delivery of one life's callbacks: they run on the loop one after another, in the order they were
/// produced, and never inside one another. A callback produced while another runs (a send's result, when the
/// delegate sends from `didReceive`) runs right after it, before the loop handles its next event: so a send's
/// `didSend` still comes before the reply to that datagram, as on the delegate queue.
///
/// A callback produced on another thread (a send that went straight to the kernel from the sending thread) is
/// posted to an inbox, under the socket's lock. A callback produced on the loop takes what waits in the inbox
/// (``takeInbox()``) under that same lock before it runs, and what is posted after it waits for it: the order the
/// socket's lock gave the callbacks is the order they run in.
// Sendable: `pending` and `isRunning` are touched on `loop` only (checked there); the inbox is behind its lock.
final class UDPLoopCallbacks: @unchecked Sendable {
    private struct Inbox {
        var callbacks = CircularBuffer<() -> Void>()
        var isDrainScheduled = false
    }

    let loop: any EventLoop
    private var pending = CircularBuffer<() -> Void>()
    private var isRunning = false
    private let inbox = LockedBox(Inbox())

    init(loop: any EventLoop) {
        self.loop = loop
    }

    /// From any thread: runs `callback` on the loop after every callback posted or produced before it.
    func post(_ callback: @escaping () -> Void) {
        let schedule = inbox.withLock { inbox -> Bool in
            inbox.callbacks.append(callback)
            defer { inbox.isDrainScheduled = true }
            return !inbox.isDrainScheduled
        }
        guard schedule else { return }
        loop.execute { self.drain() }
    }

    /// On the loop: runs `callback` now and returns true when no callback is running (nor waiting); false, without
    /// running it, when one is (then ``run(_:)`` queues it behind). Not kept, so not allocated.
    func runInline(_ callback: () -> Void) -> Bool {
        loop.preconditionInEventLoop()
        guard !isRunning else { return false }
        isRunning = true
        while let next = pending.popFirst() { next() }
        callback()
        drainPending()
        isRunning = false
        return true
    }

    /// On the loop: runs `callback` now, or after the callbacks already running or waiting.
    func run(_ callback: @escaping () -> Void) {
        loop.preconditionInEventLoop()
        pending.append(callback)
        guard !isRunning else { return }
        isRunning = true
        drainPending()
        isRunning = false
    }

    /// On the loop: runs what the inbox holds (unless a callback is running: it runs them when it returns).
    private func drain() {
        loop.preconditionInEventLoop()
        takeInbox()
        guard !isRunning else { return }
        isRunning = true
        drainPending()
        isRunning = false
    }

    /// Runs the pending callbacks, and what reaches the inbox meanwhile, until none is left.
    private func drainPending() {
        while true {
            while let next = pending.popFirst() { next() }
            takeInbox()
            if pending.isEmpty { return }
        }
    }

    /// On the loop, under the socket's lock, before a callback produced there is run: moves what was posted before it
    /// behind the pending callbacks.
    func takeInbox() {
        loop.preconditionInEventLoop()
        inbox.withLock { inbox in
            inbox.isDrainScheduled = false
            while let callback = inbox.callbacks.popFirst() { pending.append(callback) }
        }
    }
}
