import TetherConcurrency

/// The datagrams of one ``GCDAsyncUdpSocket`` life that the kernel took and whose `didSendDataWithTag` is not queued
/// yet, by tag, oldest first. A gate notes each one under its own lock, in the same step as the `sendto`; the
/// socket takes one out when it queues that callback, and `close()` takes all that remain (after closing the gates,
/// so no datagram leaves afterwards) and reports them before `udpSocketDidClose`. So a datagram that left is always
/// reported sent, even when a `close()` on another thread overtook its way back to the delegate.
///
/// Its lock is a leaf: it is taken under a gate's lock or the socket's, and takes no other.
final class UDPSentLedger: Sendable {
    private let tags = LockedBox<[Int]>([])

    /// Under a gate's lock: the kernel took a datagram of `tag`.
    func noteSent(_ tag: Int) {
        tags.withLock { $0.append(tag) }
    }

    /// Takes the oldest datagram of `tag` out (its callback is being queued); false when none is noted.
    @discardableResult
    func takeOne(_ tag: Int) -> Bool {
        tags.withLock { tags in
            guard let index = tags.firstIndex(of: tag) else { return false }
            tags.remove(at: index)
            return true
        }
    }

    /// Takes every datagram still unreported out, oldest first.
    func takeAll() -> [Int] {
        tags.withLock { tags in
            defer { tags.removeAll() }
            return tags
        }
    }
}
