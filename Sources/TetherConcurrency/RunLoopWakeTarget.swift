/// What a ``RunLoopWakeChannel`` runs on its run loop without a closure per wake: a drain that a mailbox hands over
/// with a token, held weakly while it waits.
package protocol RunLoopWakeTarget: AnyObject, Sendable {
    /// On the run loop's thread: the wake handed over with `token` has come.
    func runLoopWake(token: UInt64)
}
