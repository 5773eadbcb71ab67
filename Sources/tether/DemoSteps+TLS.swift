import Crypto
import Dispatch
import Foundation
import NIOCore
import NIOSSL
import SwiftASN1
import TetherConcurrency
import TetherSockets
import X509

extension DemoSteps {
    /// TLS with a self-signed certificate generated on the spot: an async-face TLS listener, and a delegate-face
    /// client that upgrades with `startTLS` and trusts the certificate by hand (it must be the one generated).
    static func tlsManualTrust() async throws -> String {
        let identity = try SelfSignedIdentity()
        var server = TLSSettings.server(certificateChain: [identity.certificate], privateKey: identity.privateKey)
        server.applicationProtocols = ["tether-demo"]
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0, tls: server)
        let echo = Task {
            for try await connection in listener.connections {
                while let bytes = try await connection.readAvailable() { try await connection.write(bytes) }
                try await connection.close()
            }
        }
        defer {
            echo.cancel()
            Task { try? await listener.close() }
        }

        let client = TrustingClient(expected: identity.certificate)
        let socket = GCDAsyncSocket(delegate: client, delegateQueue: client.queue)
        try socket.connect(toHost: "127.0.0.1", onPort: UInt16(listener.localPort), withTimeout: 5)
        var settings = TLSSettings.client()
        settings.manuallyEvaluatesTrust = true
        settings.applicationProtocols = ["tether-demo"]
        socket.startTLS(settings)
        socket.write(Data("hello, encrypted\n".utf8), withTimeout: 5, tag: 1)
        socket.readData(to: Data("\n".utf8), withTimeout: 5, tag: 2)
        let reply = try await client.reply()
        let protocolName = socket.negotiatedApplicationProtocol ?? "none"
        socket.disconnect()
        guard reply == "hello, encrypted\n" else { throw DemoFailure(description: "unexpected reply \(reply)") }
        return "handshake with a generated self-signed certificate, trusted by the delegate after comparing it; "
            + "ALPN \(protocolName); \"hello, encrypted\" echoed"
    }
}

/// A P-256 key and a self-signed certificate for 127.0.0.1, valid for an hour.
struct SelfSignedIdentity {
    let certificate: NIOSSLCertificate
    let privateKey: NIOSSLPrivateKey

    init() throws {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("tether demo") }
        let now = Date()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-60),
            notValidAfter: now.addingTimeInterval(3600),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { SubjectAlternativeNames([.dnsName("localhost")]) },
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
        self.certificate = try NIOSSLCertificate(
            bytes: Array(try certificate.serializeAsPEM().pemString.utf8),
            format: .pem
        )
        self.privateKey = try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem)
    }
}

/// A delegate that accepts the server only if it presents the expected certificate.
// Sendable: its only mutable state is in a `LockedBox` (used under its lock); `queue` and `expected` never change.
private final class TrustingClient: GCDAsyncSocketDelegate, @unchecked Sendable {
    private struct State {
        /// The caller of ``reply()``, once it waits.
        var waiter: CheckedContinuation<String, any Error>?
        /// The first outcome, when it came before anyone waited.
        var outcome: Result<String, any Error>?
    }

    let queue = DispatchQueue(label: "tether.demo.tls")
    private let expected: NIOSSLCertificate
    private let state = LockedBox(State())

    init(expected: NIOSSLCertificate) {
        self.expected = expected
    }

    func socket(
        _ sock: GCDAsyncSocket,
        didReceive trust: TLSPeerTrust,
        completionHandler: @escaping @Sendable (Bool) -> Void
    ) {
        completionHandler(trust.peerCertificates.first == expected)
    }

    func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        finish(.success(String(decoding: data, as: UTF8.self)))
    }

    func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {
        finish(.failure(err ?? DemoFailure(description: "closed before the reply")))
    }

    private func finish(_ value: Result<String, any Error>) {
        let waiting = state.withLock { state -> CheckedContinuation<String, any Error>? in
            defer { state.waiter = nil }
            if state.waiter == nil, state.outcome == nil { state.outcome = value }
            return state.waiter
        }
        waiting?.resume(with: value)
    }

    func reply() async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<String, any Error>? in
                if let outcome = state.outcome { return outcome }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}
