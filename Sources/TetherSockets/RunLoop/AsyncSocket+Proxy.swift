import TetherConcurrency

extension AsyncSocket {
    /// The proxy that `connect(toHost:…)` and `connect(toAddress:…)` go through; nil (the default) connects
    /// directly. A Tether addition: the original had no proxy support.
    ///
    /// Set it before connecting. `onSocket(_:didConnectToHost:port:)` comes once the proxy opened the tunnel, with
    /// the host and port given to connect (``connectedHost()`` and ``connectedPort()`` report them too). The connect
    /// timeout covers the proxy handshake. A proxy that refuses ends the connection with
    /// `onSocket(_:willDisconnectWithError:)`: an ``AsyncSocketError`` `.cfSocketError` whose `underlying` is a
    /// ``GCDAsyncSocketError`` carrying the ``ProxyError`` (``GCDAsyncSocketError/proxyError``).
    public var proxy: ProxyConfiguration? {
        get { state.withLock { $0.proxy } }
        set { state.withLock { $0.proxy = newValue } }
    }
}
