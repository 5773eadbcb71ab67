extension GCDAsyncSocketError {
    /// The proxy's refusal behind this error, when the connection went through a proxy that did not open the tunnel
    /// (a Tether addition; see ``ProxyConfiguration``).
    public var proxyError: ProxyError? {
        var cause: (any Error)? = underlying
        while let current = cause {
            if let proxy = current as? ProxyError { return proxy }
            cause = (current as? GCDAsyncSocketError)?.underlying
        }
        return nil
    }

    /// The face error for a proxy that did not open the tunnel: code `.other`, the proxy's words as the message.
    static func proxy(_ error: ProxyError) -> GCDAsyncSocketError {
        GCDAsyncSocketError(code: .other, message: error.message, underlying: error)
    }
}
