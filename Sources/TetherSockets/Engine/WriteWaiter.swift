/// Where a queued write's completion goes.
enum WriteWaiter {
    /// Delegate face: `didWrite` with this tag.
    case delegate(tag: Int)
    /// Async face: resumed once the write is accepted (``WriteAdmission``); `nil` once no task waits for it.
    case task(CheckedContinuation<Void, any Error>?)
}
