import Foundation
import TetherConcurrency

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs a connection's delegate calls on its delivery target, one at a time and in order.
///
/// The next call is handed to the target only after the previous one returned, so calls never overlap even on
/// a concurrent `OperationQueue` or on several run loops. After ``close()`` no call begins; calls still
/// pending run with `isLive == false` on the closing thread so that their waiters resume.
final class DelegateDelivery {
    enum Target {
        case queue(OperationQueue)
        case runLoops([(RunLoop, RunLoop.Mode)])
    }

    /// What a connection's load produces, handed over as a value (no closure to make and free per call): the
    /// delivery runs it through its ``handler``.
    enum Event {
        case response(HTTPURLResponse)
        case data(Data)
        case metrics(URLConnectionMetrics)
        case finish
        case failure(URLError)
    }

    private enum Work {
        case call((_ isLive: Bool) -> Void)
        case event(Event)
    }

    private final class Entry {
        /// Set once, under the delivery's state lock, by whoever runs the entry.
        var claimed = false
        let work: Work

        init(_ work: Work) { self.work = work }
    }

    /// The queue of entries; read and changed only under the box's lock.
    private struct State {
        var pending: [Entry] = []
        var pendingHead = 0
        var inFlight: Entry?
        var isClosed = false

        /// Takes the next entry to run, unless one is in flight.
        mutating func next() -> Entry? {
            guard self.inFlight == nil, self.pendingHead < self.pending.count else { return nil }
            let entry = self.pending[self.pendingHead]
            self.pendingHead += 1
            if self.pendingHead > 64, self.pendingHead * 2 > self.pending.count {
                self.pending.removeFirst(self.pendingHead)
                self.pendingHead = 0
            }
            self.inFlight = entry
            return entry
        }
    }

    private let state = LockedBox(State())
    private let target: Target
    /// Runs an ``Event`` (`isLive` as for calls). It may hold its owner: the owner breaks the cycle when it lets
    /// go of the delivery.
    private let handler: (Event, _ isLive: Bool) -> Void

    init(target: Target, handler: @escaping (Event, _ isLive: Bool) -> Void = { _, _ in }) {
        self.target = target
        self.handler = handler
    }

    /// Queues `body`; it runs on the target with `isLive == true`, or with `false` if the delivery closed first.
    ///
    /// - Parameter deferred: When true, `body` waits for the next ``flush()`` (or for a call submitted after it)
    ///   before the target is asked to run anything: calls produced in a row then reach the target in one
    ///   operation. The producer must flush before it waits for anything.
    func submit(deferred: Bool = false, _ body: @escaping (_ isLive: Bool) -> Void) {
        self.submit(Entry(.call(body)), deferred: deferred)
    }

    /// Queues `event` for the ``handler``, like a call.
    func submit(_ event: Event, deferred: Bool) {
        self.submit(Entry(.event(event)), deferred: deferred)
    }

    private func submit(_ entry: Entry, deferred: Bool) {
        let (wasClosed, toPost): (Bool, Entry?) = self.state.withLock { state in
            if state.isClosed { return (true, nil) }
            state.pending.append(entry)
            return (false, deferred ? nil : state.next())
        }
        if wasClosed {
            // Never queued: no one else can run it.
            self.perform(entry, isLive: false)
            return
        }
        if let toPost { self.post(toPost) }
    }

    private func perform(_ entry: Entry, isLive: Bool) {
        switch entry.work {
        case .call(let body): body(isLive)
        case .event(let event): self.handler(event, isLive)
        }
    }

    /// Hands deferred calls to the target (nothing to do when a batch is already running: it takes them).
    func flush() {
        let toPost: Entry? = self.state.withLock { $0.isClosed ? nil : $0.next() }
        if let toPost { self.post(toPost) }
    }

    /// Stops delivery: no call begins after this returns (one already running may finish).
    func close() {
        let entries: [Entry] = self.state.withLock { state in
            if state.isClosed { return [] }
            state.isClosed = true
            var all = Array(state.pending[state.pendingHead...])
            if let inFlight = state.inFlight { all.insert(inFlight, at: 0) }
            state.pending = []
            state.pendingHead = 0
            state.inFlight = nil
            return all.filter { entry in
                if entry.claimed { return false }
                entry.claimed = true
                return true
            }
        }
        for entry in entries {
            self.perform(entry, isLive: false)
        }
    }

    var isOpen: Bool { self.state.withLock { !$0.isClosed } }

    private func post(_ entry: Entry) {
        // Sendable: the entry is run by whoever claims it under the state's lock, exactly once.
        let box = UncheckedSendableBox((self, entry))
        switch self.target {
        case .queue(let queue):
            queue.addOperation {
                let (delivery, entry) = box.value
                delivery.run(entry)
            }
        case .runLoops(let pairs):
            // Through the waker: `RunLoop.perform` alone does not wake a run loop that waits (a delegate on a run
            // loop running until a far date heard nothing until another source woke it).
            for (runLoop, mode) in pairs {
                RunLoopWaker.shared.perform(on: runLoop, modes: [mode]) {
                    let (delivery, entry) = box.value
                    delivery.run(entry)
                }
            }
        }
    }

    /// Runs `entry`, then the calls queued behind it in the same turn of the target (up to a batch, so that a
    /// long download does not keep one queue operation or run-loop turn forever): one hop per batch, not per call.
    private func run(_ entry: Entry) {
        var entry = entry
        var ran = 0
        while true {
            let current = entry
            // nil: already claimed (by `close()`, which runs it); else whether the delivery is still open.
            let isLive: Bool? = self.state.withLock { state in
                if current.claimed { return nil }
                current.claimed = true
                return !state.isClosed
            }
            guard let isLive else { return }
            self.perform(entry, isLive: isLive)
            ran += 1
            let next: Entry? = self.state.withLock { state in
                if state.inFlight === current { state.inFlight = nil }
                return state.isClosed ? nil : state.next()
            }
            guard let next else { return }
            if ran >= Self.batchLimit {
                self.post(next)
                return
            }
            entry = next
        }
    }

    private static let batchLimit = 64
}

// Sendable: the queue lives in `state`, read and changed only under its lock; `target` and `handler` never change.
extension DelegateDelivery: @unchecked Sendable {}
