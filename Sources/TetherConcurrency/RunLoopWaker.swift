package import Foundation

/// Runs work on a run loop, in given modes, waking it if it waits: the one way the RunLoop-era faces reach a run
/// loop from another thread (the RunLoop-era sockets, `URLConnection` scheduled on run loops).
///
/// There is one ``RunLoopWakeChannel`` per run loop and set of modes, made on first use and kept while the run loop
/// exists; hold the channel (``channel(for:modes:)``) to hand work over without looking it up each time. On Linux a
/// channel wakes its run loop by writing an `eventfd` that a run-loop source watches; until that source exists (it
/// is added on the run loop's own thread, at the channel's first wake) a `Timer` does. Nothing is made per wake or
/// per socket: swift-corelibs-foundation never frees a `Timer` made with a block, nor the block (the Swift object
/// and its `CFRunLoopTimer` hold each other), so a timer per socket or per delivery would leak a little for every
/// socket a program ever opened. Channels of run loops that no longer exist are retired (their source removed, their
/// descriptor closed) when the next channel is made, so what stays is bounded by the run loops alive at once (plus
/// each channel's timer: a few hundred bytes per run loop and mode set ever used).
package final class RunLoopWaker: Sendable {
    /// The waker of the whole process.
    package static let shared = RunLoopWaker()

    private struct Key: Hashable {
        var runLoop: ObjectIdentifier
        var modes: [RunLoop.Mode]
    }

    private let channels = LockedBox<[Key: RunLoopWakeChannel]>([:])

    /// The channel to `runLoop` in `modes`.
    package func channel(for runLoop: RunLoop, modes: [RunLoop.Mode]) -> RunLoopWakeChannel {
        let key = Key(runLoop: ObjectIdentifier(runLoop), modes: modes)
        let (channel, retired): (RunLoopWakeChannel, [RunLoopWakeChannel]) = channels.withLock { channels in
            if let existing = channels[key], existing.belongs(to: runLoop) { return (existing, []) }
            // A new channel: those of run loops that are gone go (one may have had this run loop's address).
            let gone = channels.filter { !$0.value.isAlive }
            for key in gone.keys { channels[key] = nil }
            // The timer's block captures only the key.
            let channel = RunLoopWakeChannel(runLoop: runLoop, modes: modes) { RunLoopWaker.shared.timerFired(key) }
            channels[key] = channel
            return (channel, Array(gone.values))
        }
        for old in retired { old.retire() }
        return channel
    }

    /// Runs `block` on `runLoop` the next time it runs in one of `modes`, after the work handed to it before for the
    /// same modes.
    package func perform(on runLoop: RunLoop, modes: [RunLoop.Mode], _ block: @escaping () -> Void) {
        channel(for: runLoop, modes: modes).perform(block)
    }

    /// The sets of modes for which `runLoop` has a channel (for tests).
    package func wakeModes(for runLoop: RunLoop) -> [[RunLoop.Mode]] {
        channels.withLock { channels in
            channels.values.filter { $0.belongs(to: runLoop) }.map(\.modes)
        }
    }

    /// On the run loop, from a channel's timer: the channel of `key` takes its first wake.
    private func timerFired(_ key: Key) {
        let channel = channels.withLock { $0[key] }
        channel?.timerFired()
    }
}
