extension GCDAsyncSocketDelegate {
    /// Does nothing (`socketDidDisconnect` follows with the same error).
    public func socket(_ sock: GCDAsyncSocket, didNotConnect error: any Error) {}
    /// Does nothing.
    public func socket(_ sock: GCDAsyncSocket, didBecomeIdle event: IdleStateEvent) {}
}

extension AsyncSocketDelegate {
    /// Does nothing (`willDisconnectWithError` and `onSocketDidDisconnect` follow).
    public func onSocket(_ sock: AsyncSocket, didNotConnect err: any Error) {}
    /// Does nothing.
    public func onSocket(_ sock: AsyncSocket, didBecomeIdle event: IdleStateEvent) {}
}
