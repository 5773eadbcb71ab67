import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import TetherConcurrency

extension SocketEngine {
    // MARK: TLS

    /// Queues the upgrade's marker in both queues: the handshake starts once every read and write queued before it
    /// completed; operations queued after it wait for the handshake. A second request while one is pending or
    /// after the connection is secure is ignored (its promise fails with `.badConfig`).
    func startTLS(_ request: TLSUpgrade) {
        eventLoop.assertInEventLoop()
        if let refusal = machine.requestTLS() {
            request.promise?.fail(refusal)
            return
        }
        upgrade = request
        if let timeout = request.timeout {
            tlsTimer = eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in
                tlsTimer = nil
                if upgrade === request { close(error: request.timeoutError) }
            }
        }
        startHandshakeIfReady()
    }

    /// Starts the handshake when both queues reached the marker: the context is fetched (built off the loop when not
    /// cached), then the TLS handler joins the pipeline in front of the engine and the bytes buffered so far (the
    /// peer may already have sent its hello) are fed to it as ciphertext.
    func startHandshakeIfReady() {
        guard context != nil, let request = upgrade, machine.tlsReadyToStart() else { return }
        request.context(on: eventLoop).assumeIsolated().whenComplete { [self] result in
            guard upgrade === request, machine.tlsContextReady() else { return }
            switch result {
            case .success(let sslContext): installTLS(request, sslContext: sslContext)
            case .failure(let error): close(error: .wrapping(error, function: "startTLS"))
            }
        }
    }

    private func installTLS(_ request: TLSUpgrade, sslContext: NIOSSLContext) {
        guard let context else { return }
        let handler: NIOSSLHandler
        do {
            handler = try request.makeHandler(context: sslContext) { [self] certificates, promise in
                askTrust(certificates, promise: promise)
            }
            tlsHandler = handler
            try context.pipeline.syncOperations.addHandler(handler, position: .before(self))
        } catch {
            close(error: .wrapping(error, function: "startTLS"))
            return
        }
        guard peek({ $0.reads.bufferedBytes }) > 0, peek({ $0.isActive }),
            let tlsContext = try? context.pipeline.syncOperations.context(handler: handler)
        else { return }
        let ciphertext = machine.reads.takeBuffer()
        handler.channelRead(context: tlsContext, data: NIOAny(ciphertext))
        if peek({ $0.isActive }) { handler.channelReadComplete(context: tlsContext) }
    }

    func handshakeCompleted(negotiatedProtocol: String?) {
        guard peek({ $0.isActive }), let request = upgrade else { return }
        if let failure = request.pinningFailure(leaf: tlsHandler?.peerCertificate) {
            close(error: failure)
            return
        }
        guard machine.tlsHandshakeCompleted() else { return }
        upgrade = nil
        tlsTimer?.cancel()
        tlsTimer = nil
        owner?.engineDidSecure(self, negotiatedProtocol: negotiatedProtocol)
        request.promise?.succeed(())
        guard peek({ $0.isActive }) else { return }
        sendHeldWrites()
        startCurrentWrite()
        processReads()
    }

    /// Manual trust: asks the owner; the first answer completes NIOSSL's promise on the event loop.
    private func askTrust(_ certificates: [NIOSSLCertificate], promise: EventLoopPromise<NIOSSLVerificationResult>) {
        let answered = LockedBox(false)
        let loop = eventLoop
        let engine = NIOLoopBound(self, eventLoop: loop)
        let answer: @Sendable (Bool) -> Void = { accepted in
            let first = answered.withLock { done -> Bool in
                defer { done = true }
                return !done
            }
            guard first else { return }
            loop.execute {
                if !accepted { engine.value.machine.tlsTrustRejected() }
                promise.succeed(accepted ? .certificateVerified : .failed)
            }
        }
        guard let owner, peek({ $0.isActive }) else {
            answer(false)
            return
        }
        owner.engine(
            self,
            didReceive: TLSPeerTrust(peerCertificates: certificates, peerName: upgrade?.peerName),
            answer: answer
        )
    }
}
