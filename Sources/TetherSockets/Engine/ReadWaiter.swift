/// Where a queued read's result goes: a delegate callback (by tag) or an awaiting task.
///
/// Generic over the task's continuation so that the read queue can be driven in tests with plain values.
enum ReadWaiter<Task> {
    /// Delegate face: `didRead` with this tag, written into the caller's buffer when there is one.
    case delegate(tag: Int, destination: CallerBuffer?)
    /// Async face: resumed with the bytes, or `nil` for an end of stream that `readAvailable` reports.
    case task(Task)
    /// Async face: one frame decoded by the caller's codec.
    case frame(any FrameReadOperation)

    /// The delegate face's tag; nil for a task.
    var tag: Int? {
        if case .delegate(let tag, _) = self { return tag }
        return nil
    }
}
