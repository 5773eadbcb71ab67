/// What a send that went straight to the kernel from the sending thread leaves to run once the socket's lock is
/// released: its result's callback, when it was produced on the life's loop in event-loop delivery (posted already
/// otherwise, or dropped for an ended life).
enum UDPDirectSendOutcome {
    /// The kernel took the datagram.
    case sent((UDPLoopCallbacks, any GCDAsyncUdpSocketDelegate)?)
    /// The kernel refused it.
    case failed((UDPLoopCallbacks, () -> Void)?)
}
