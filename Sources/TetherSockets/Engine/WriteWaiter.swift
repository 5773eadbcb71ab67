/// Where a queued write's completion goes.
///
/// Generic over the task's continuation so that the write queue can be driven in tests with plain values.
enum WriteWaiter<Task> {
    /// Delegate face: `didWrite` with this tag.
    case delegate(tag: Int)
    /// Async face: resumed once the write is accepted (``WriteAdmission``); `nil` once no task waits for it.
    case task(Task?)

    /// The delegate face's tag; nil for a task.
    var tag: Int? {
        if case .delegate(let tag) = self { return tag }
        return nil
    }
}
