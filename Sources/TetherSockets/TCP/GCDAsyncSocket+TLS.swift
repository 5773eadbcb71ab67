import TetherConcurrency

extension GCDAsyncSocket {
    /// Secures the connection with TLS once every read and write queued before this call completed; reads and
    /// writes queued after it run encrypted. `socketDidSecure` follows the handshake.
    ///
    /// As the original: dropped before the socket is started and after `disconnectAfter…`, kept while connecting,
    /// a second call is ignored, and bytes already received are fed to TLS. Δ (security): a client connected by host
    /// name verifies that name unless ``TLSSettings/verifiesPeerName`` is false.
    ///
    /// Bad settings (a server without certificate or key, a pin that is not 32 bytes) close the socket with
    /// ``GCDAsyncSocketError/Code/badConfig`` through `socketDidDisconnect`; a failed handshake or a rejected
    /// certificate closes it with code `.other`, domain `.tls`.
    /// - Parameter tlsSettings: nil = ``TLSSettings/client(peerName:)`` (verify the chain and the name).
    public func startTLS(_ tlsSettings: TLSSettings?) {
        let settings = tlsSettings ?? .client()
        let adapter: EngineAdapter? = state.withLock { s in
            guard s.lifecycle.acceptsOperations, !s.tlsRequested, let adapter = s.adapter else { return nil }
            s.tlsRequested = true
            return adapter
        }
        guard let adapter else { return }
        let host = state.withLock { $0.connectHost }
        do {
            try settings.validate(asyncFace: false, expectsServer: nil)
        } catch let error as GCDAsyncSocketError {
            adapter.withEngine { engine in engine.close(error: error) }
            return
        } catch {
            return
        }
        adapter.withEngine { engine in
            engine.startTLS(TLSUpgrade(settings: settings, connectHost: host, promise: nil))
        }
    }
}
