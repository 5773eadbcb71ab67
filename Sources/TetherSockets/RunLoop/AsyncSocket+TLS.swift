import Foundation
import TetherConcurrency

extension AsyncSocket {
    /// Secures the connection once every read and write queued before this call completed (reads and writes
    /// queued after it run encrypted); `onSocketDidSecure` follows the handshake, or `willDisconnectWithError`
    /// with a `"kCFStreamErrorDomainSSL"` error carrying the nearest SecureTransport code (−9812 unknown root,
    /// −9843 host name mismatch, −9806 closed during the handshake, …).
    ///
    /// The dictionary takes CFNetwork's keys, as the original: nil or `[:]` verify the chain but **not the host
    /// name** unless ``kCFStreamSSLPeerName`` is given (the original's default); `kCFStreamSSLPeerName` = a
    /// name → that name is verified and sent as SNI, even when any root is allowed; `NSNull()` → no name check;
    /// ``kCFStreamSSLValidatesCertificateChain`` `false` or ``kCFStreamSSLAllowsAnyRoot`` `true` → no chain
    /// verification; ``kCFStreamSSLLevel`` `…TLSv1` → TLS 1.0 floor, `…NegotiatedSSL` → Tether's default floor
    /// (TLS 1.2), SSL levels and `…None` are refused; ``kCFStreamSSLCertificates`` (an array of `NIOSSLCertificate`,
    /// leaf first) with ``kTetherStreamSSLPrivateKey``; ``kCFStreamSSLIsServer`` `true` → act as the server.
    /// Unknown keys are ignored. A known key with a value of the wrong type (or a refused level) closes the socket
    /// with ``AsyncSocketError/Code/cfSocketError`` whose `underlying` names the key.
    ///
    /// ``kCFStreamSSLAllowsExpiredCertificates``/``kCFStreamSSLAllowsExpiredRoots`` `true` → a chain whose only
    /// fault is an expiry date is accepted. Δ: ``kTetherStreamSSLTrustRoots`` (an array of `NIOSSLCertificate`)
    /// replaces the system's roots (Linux has no keychain). The client evaluates the server's chain itself, as
    /// SecureTransport did: a refusal reports −9812 (unknown root or broken chain), −9814 (expired), −9815 (not yet
    /// valid) or −9843 (name mismatch). A second `startTLS` is ignored; so is one before `connect`/`accept` or after
    /// `disconnectAfter…`.
    public func startTLS(_ tlsSettings: [String: Any]?) {
        do {
            let translated = try TLSDictionary(tlsSettings ?? [:])
            startTLS(translated.settings, evaluator: translated.evaluator)
        } catch {
            fail(with: AsyncSocketError(code: .cfSocketError, underlying: error))
        }
    }

    /// Δ: secures the connection with Tether's ``TLSSettings`` (trust roots, pins, ALPN, TLS 1.3), as
    /// ``GCDAsyncSocket/startTLS(_:)`` does; the same queueing and callbacks as ``startTLS(_:)-([String:Any]?)``.
    /// Manual trust evaluation has no delegate method in this era: ``TLSSettings/manuallyEvaluatesTrust`` is
    /// refused (closes with ``AsyncSocketError/Code/cfSocketError``).
    public func startTLS(_ tlsSettings: TLSSettings) {
        guard !tlsSettings.manuallyEvaluatesTrust else {
            let problem = TLSDictionary.BadValue(
                key: "manuallyEvaluatesTrust",
                problem: "needs a delegate to answer; AsyncSocket has none (use GCDAsyncSocket)"
            )
            return fail(with: AsyncSocketError(code: .cfSocketError, underlying: problem))
        }
        startTLS(tlsSettings, evaluator: nil)
    }

    private func startTLS(_ settings: TLSSettings, evaluator: RunLoopTrustEvaluator?) {
        let core: GCDAsyncSocket? = state.withLock { s in
            guard s.phase != .idle, s.phase != .listening, !s.forbidsIO, !s.tlsRequested, let core = s.core
            else { return nil }
            s.tlsRequested = true
            s.pendingReads += 1
            s.pendingWrites += 1
            s.bridge?.trustCheck = .init(evaluator: evaluator)
            return core
        }
        core?.startTLS(settings)
    }

    /// Closes the current life with `error`: `willDisconnectWithError` then `onSocketDidDisconnect`, on the run loop
    /// (owed to the life that ended, so a `connect` before they run does not lose them).
    func fail(with error: AsyncSocketError) {
        guard endLife() else { return }
        mailbox.post { [weak self] in
            guard let self, let delegate else { return }
            delegate.onSocket(self, willDisconnectWithError: error)
            delegate.onSocketDidDisconnect(self)
        }
    }
}
