/// The current operation of each queue, published for the synchronous progress getters.
struct ProgressSnapshot: Sendable {
    var read: GCDAsyncSocket.IOProgress?
    var write: GCDAsyncSocket.IOProgress?
}
