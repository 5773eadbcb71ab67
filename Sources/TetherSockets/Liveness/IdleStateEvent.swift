/// What an idle detector reports (Tether addition), with SwiftNIO's `IdleStateHandler` meanings.
///
/// Each is reported once the connection has been idle that way for its timeout (``IdleTimeouts``), then again after
/// every further timeout for as long as it stays idle.
public enum IdleStateEvent: Sendable, Hashable {
    /// Nothing was received for ``IdleTimeouts/read``.
    case read
    /// No write completed (no byte was handed to the kernel) for ``IdleTimeouts/write``.
    case write
    /// Nothing was received and no write completed for ``IdleTimeouts/all``.
    case all
}
