import TetherConcurrency

/// Whether a closure ran, settable from any thread.
struct LockedRan: Sendable {
    private let box = LockedBox(false)

    var value: Bool { box.withLock { $0 } }

    func mark() { box.withLock { $0 = true } }
}
