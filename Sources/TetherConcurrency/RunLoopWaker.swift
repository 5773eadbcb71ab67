package import Foundation

/// Runs blocks on a run loop, in given modes, waking it if it waits: the one way the RunLoop-era faces reach a run
/// loop from another thread (the RunLoop-era sockets, `URLConnection` scheduled on run loops).
///
/// A `Timer` is what wakes a waiting run loop from another thread (re-arming one with `fireDate` does;
/// `RunLoop.perform` alone may not). But swift-corelibs-foundation never frees a `Timer` made with a block, nor the
/// block: the Swift object and its `CFRunLoopTimer` hold each other, fired or invalidated. A timer per socket, or
/// per delivery, would leak a little for every socket a program ever opened (LeakSanitizer found 2.5 MB after the
/// sockets tests). So there is one repeating timer per run loop and set of modes, made on first use and kept; its
/// block captures only its key, and the blocks to run wait here until it fires. Entries of run loops that no longer
/// exist are dropped when the next entry is made, so what stays is bounded by the run loops alive at once (plus
/// each one's timer: a few hundred bytes per run loop and mode set ever used).
package final class RunLoopWaker: Sendable {
    /// The waker of the whole process.
    package static let shared = RunLoopWaker()

    private struct Key: Hashable {
        var runLoop: ObjectIdentifier
        var modes: [RunLoop.Mode]
    }

    // Sendable: `runLoop` is read only to learn whether the run loop still exists and compared by identity (loading
    // a weak reference is thread-safe), and the entry lives behind the waker's lock.
    private struct Entry: @unchecked Sendable {
        weak var runLoop: RunLoop?
        // Sendable: a timer's fire date is thread-safe (CFRunLoopTimerSetNextFireDate); its block runs on its run
        // loop only.
        var timer: UncheckedSendableBox<Timer>
        var blocks: [UncheckedSendableBox<() -> Void>] = []
    }

    private let entries = LockedBox<[Key: Entry]>([:])

    /// Runs `block` on `runLoop` the next time it runs in one of `modes`, after the blocks handed to it before for
    /// the same modes.
    package func perform(on runLoop: RunLoop, modes: [RunLoop.Mode], _ block: @escaping () -> Void) {
        let key = Key(runLoop: ObjectIdentifier(runLoop), modes: modes)
        // Sendable: the block runs on the run loop's thread only, when the timer fires there.
        let boxed = UncheckedSendableBox(block)
        let existing: Timer? = entries.withLock { entries in
            guard var entry = entries[key], entry.runLoop === runLoop else { return nil }
            entry.blocks.append(boxed)
            entries[key] = entry
            return entry.timer.value
        }
        if let existing {
            existing.fireDate = Date()
            return
        }
        // The timer is made and registered outside the lock (registering may run nothing, but takes the run loop's
        // own lock); a racing first use of the same key makes a second timer, and the later one is kept.
        let timer = Timer(fire: .distantFuture, interval: 1e9, repeats: true) { _ in
            RunLoopWaker.shared.fire(key)
        }
        for mode in modes { runLoop.add(timer, forMode: mode) }
        let replaced: Timer? = entries.withLock { entries in
            entries = entries.filter { $0.value.runLoop != nil }
            var entry = Entry(runLoop: runLoop, timer: UncheckedSendableBox(timer))
            var replaced: Timer?
            if let old = entries[key], old.runLoop === runLoop {
                entry.blocks = old.blocks
                replaced = old.timer.value
            }
            entry.blocks.append(boxed)
            entries[key] = entry
            return replaced
        }
        replaced?.invalidate()
        timer.fireDate = Date()
    }

    /// The sets of modes for which `runLoop` has a wake timer (for tests).
    package func timerModes(for runLoop: RunLoop) -> [[RunLoop.Mode]] {
        entries.withLock { entries in
            entries.filter { $0.value.runLoop === runLoop }.map(\.key.modes)
        }
    }

    /// On the run loop: runs the blocks waiting for `key`. Blocks handed over while they run wait for the timer's
    /// next firing (re-armed by their hand-over), so that a block that hands over another cannot keep the run loop
    /// from its other sources.
    private func fire(_ key: Key) {
        let blocks: [UncheckedSendableBox<() -> Void>] = entries.withLock { entries in
            guard var entry = entries[key], !entry.blocks.isEmpty else { return [] }
            defer {
                entry.blocks = []
                entries[key] = entry
            }
            return entry.blocks
        }
        for block in blocks { block.value() }
    }
}
