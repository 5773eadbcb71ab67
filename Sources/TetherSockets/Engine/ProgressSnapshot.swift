/// The current operation of each queue, published for the synchronous progress getters.
struct ProgressSnapshot: Sendable {
    var read: AsyncSocket.IOProgress?
    var write: AsyncSocket.IOProgress?
}
