import TetherConcurrency

extension GCDAsyncSocket {
    /// The proxy that `connect(toHost:…)` and `connect(toAddress:…)` go through; nil (the default) connects
    /// directly. A Tether addition: CocoaAsyncSocket had no proxy support.
    ///
    /// Set it before connecting; it applies to the next connect (not to unix-domain sockets or accepted ones).
    /// `socket(_:didConnectToHost:port:)` then comes once the proxy opened the tunnel, with the host and port given
    /// to connect (as ProxyKit's `GCDAsyncProxySocket`); ``connectedHost`` and ``connectedPort`` report them too,
    /// ``connectedAddress`` the proxy's address. The connect timeout covers the proxy handshake. A proxy that
    /// refuses ends the socket with `socketDidDisconnect` and a ``GCDAsyncSocketError`` `.other` whose
    /// ``GCDAsyncSocketError/proxyError`` says why. `startTLS` after connecting verifies the target's name.
    ///
    /// ```swift
    /// socket.proxy = .socks5(host: "127.0.0.1", port: 1080)
    /// try socket.connect(toHost: "example.com", onPort: 443, withTimeout: 10)
    /// socket.startTLS(nil)
    /// ```
    public var proxy: ProxyConfiguration? {
        get { state.withLock { $0.configuration.proxy } }
        set { state.withLock { $0.configuration.proxy = newValue } }
    }
}
