import Foundation
import NIOConcurrencyHelpers

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
        case finish
        case failure(URLError)
    }

    private enum Work {
        case call((_ isLive: Bool) -> Void)
        case event(Event)
    }

    private final class Entry {
        /// Set once, under the delivery's lock, by whoever runs the entry.
        var claimed = false
        let work: Work

        init(_ work: Work) { self.work = work }
    }

    private let lock = NIOLock()
    private let target: Target
    /// Runs an ``Event`` (`isLive` as for calls). It may hold its owner: the owner breaks the cycle when it lets
    /// go of the delivery.
    private let handler: (Event, _ isLive: Bool) -> Void
    private var pending: [Entry] = []
    private var pendingHead = 0
    private var inFlight: Entry?
    private var isClosed = false

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
        let (wasClosed, toPost): (Bool, Entry?) = self.lock.withLock {
            if self.isClosed { return (true, nil) }
            self.pending.append(entry)
            return (false, deferred ? nil : self.nextLocked())
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
        let toPost: Entry? = self.lock.withLock { self.isClosed ? nil : self.nextLocked() }
        if let toPost { self.post(toPost) }
    }

    /// Stops delivery: no call begins after this returns (one already running may finish).
    func close() {
        let entries: [Entry] = self.lock.withLock {
            if self.isClosed { return [] }
            self.isClosed = true
            var all = Array(self.pending[self.pendingHead...])
            if let inFlight = self.inFlight { all.insert(inFlight, at: 0) }
            self.pending = []
            self.pendingHead = 0
            self.inFlight = nil
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

    var isOpen: Bool { self.lock.withLock { !self.isClosed } }

    private func nextLocked() -> Entry? {
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

    private func post(_ entry: Entry) {
        let box = UncheckedBox((self, entry))
        switch self.target {
        case .queue(let queue):
            queue.addOperation {
                let (delivery, entry) = box.value
                delivery.run(entry)
            }
        case .runLoops(let pairs):
            for (runLoop, mode) in pairs {
                runLoop.perform(inModes: [mode]) {
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
            let isLive: Bool? = self.lock.withLock {
                if current.claimed { return nil }
                current.claimed = true
                return !self.isClosed
            }
            guard let isLive else { return }
            self.perform(entry, isLive: isLive)
            ran += 1
            let next: Entry? = self.lock.withLock {
                if self.inFlight === current { self.inFlight = nil }
                return self.isClosed ? nil : self.nextLocked()
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

// Delivery state is guarded by `lock`; entries are claimed exactly once, under the same lock.
extension DelegateDelivery: @unchecked Sendable {}

/// Carries a value that is only touched on the thread that the caller arranged, across a `@Sendable` boundary.
struct UncheckedBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
