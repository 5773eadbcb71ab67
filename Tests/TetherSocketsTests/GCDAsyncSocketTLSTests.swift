import Foundation
import NIOCore
import NIOSSL
import Testing
import TetherConcurrency

@testable import TetherSockets

/// `GCDAsyncSocket.startTLS` against real peers: `openssl s_server`/`s_client` and Python's `ssl`.
@Suite(.timeLimit(.minutes(2)))
struct GCDAsyncSocketTLSTests {
    let certificates: TLSTestCertificates

    init() async throws {
        certificates = try await TLSTestCertificates.shared()
    }

    /// A delegate-face client connected to 127.0.0.1:`port` (by `host`), with `startTLS` queued at once.
    func secureClient(
        port: Int,
        host: String = "127.0.0.1",
        settings: TLSSettings?,
        configure: (SocketRecorder) -> Void = { _ in }
    ) throws -> (GCDAsyncSocket, SocketRecorder) {
        let recorder = SocketRecorder(label: "tls-client")
        configure(recorder)
        let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        try socket.connect(toHost: host, onPort: UInt16(port), withTimeout: 10)
        socket.startTLS(settings)
        return (socket, recorder)
    }

    func openSSLServer(_ extra: [String] = [], certificate: String = "server") throws -> PeerProcess {
        try PeerProcess(
            [
                "openssl", "s_server", "-accept", "0", "-cert", certificates.certificatePath(certificate),
                "-key", certificates.keyPath(certificate), "-rev",
            ] + extra
        )
    }

    @Test func handshakeAndDataBothWaysAgainstOpenSSLServer() async throws {
        let server = try openSSLServer()
        defer { server.kill() }
        let port = try await server.port()
        let (socket, recorder) = try secureClient(port: port, host: "localhost", settings: try certificates.client())
        defer { socket.disconnect() }
        socket.write(Data("hello tls\n".utf8), withTimeout: 10, tag: 1)
        socket.readData(to: Data("\n".utf8), withTimeout: 10, tag: 2)
        let events = try await recorder.wait { $0.contains(.read(Data("slt olleh\n".utf8), tag: 2)) }
        // The handshake completes before the reads and writes queued after startTLS.
        #expect(events.firstIndex(of: .secured)! < events.firstIndex(of: .wrote(tag: 1))!)
        #expect(socket.isSecure)
    }

    @Test func operationsQueuedBeforeStartTLSRunInPlaintext() async throws {
        let server = try await PeerProcess.pythonServer(["--starttls"])
        defer { server.kill() }
        let port = try await server.port()
        let recorder = SocketRecorder(label: "starttls-client")
        let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        defer { socket.disconnect() }
        try socket.connect(toHost: "localhost", onPort: UInt16(port), withTimeout: 10)
        // Queued together, before the connection even exists: the line goes out in plaintext, then TLS.
        socket.write(Data("STARTTLS\n".utf8), withTimeout: 10, tag: 1)
        socket.startTLS(try certificates.client())
        socket.write(Data("secret\n".utf8), withTimeout: 10, tag: 2)
        socket.readData(toLength: 7, withTimeout: 10, tag: 3)
        try await recorder.wait { $0.contains(.read(Data("secret\n".utf8), tag: 3)) }
        #expect(try await server.line(startingWith: "PLAIN") == "PLAIN STARTTLS")
        #expect(try await server.line(startingWith: "SECURE")?.hasPrefix("SECURE TLSv1.3") == true)
        #expect(recorder.events.filter { $0 == .secured }.count == 1)
    }

    @Test func theServerRoleFeedsBytesAlreadyBufferedToTLS() async throws {
        let listener = SocketRecorder(label: "tls-listener")
        let socket = GCDAsyncSocket(delegate: listener, delegateQueue: listener.queue)
        try socket.accept(onInterface: "127.0.0.1", port: 0)
        defer {
            socket.disconnect()
            for child in listener.acceptedSockets { child.disconnect() }
        }
        let client = try PeerProcess.python([
            "client", "--port", "\(socket.localPort)", "--starttls", "--ca", certificates.certificatePath("ca"),
            "--server-name", "localhost", "--message", "over the upgraded stream\n",
        ])
        defer { client.kill() }
        try await listener.wait { $0.contains(.accepted) }
        let child = try #require(listener.acceptedSockets.first)
        // The client sent its line and its ClientHello back to back: wait until the engine's buffer holds more than
        // the line, so that the hello is buffered when the handshake starts.
        let machine = try #require(child.state.withLock { $0.machine })
        let line = "STARTTLS\n".utf8.count
        while machine.withLock({ $0.reads.bufferedBytes }) <= line { await Task.yield() }
        child.readData(to: Data("\n".utf8), withTimeout: 10, tag: 1)
        child.startTLS(try certificates.server())
        child.readData(to: Data("\n".utf8), withTimeout: 10, tag: 2)
        let events = try await listener.wait { $0.contains { if case .read(_, 2) = $0 { true } else { false } } }
        #expect(events.contains(.read(Data("STARTTLS\n".utf8), tag: 1)))
        #expect(events.contains(.read(Data("over the upgraded stream\n".utf8), tag: 2)))
        // Checked while the client still waits for the reply: after it closes, the socket is disconnected.
        #expect(child.isSecure)
        child.write(Data("over the upgraded stream\n".utf8), withTimeout: 10, tag: 3)
        #expect(try await client.line(startingWith: "GOT") == "GOT over the upgraded stream")
    }

    @Test func theServerRoleServesOpenSSLClients() async throws {
        let listener = SocketRecorder(label: "tls-server")
        listener.onAccept = { _, child in
            child.startTLS(try? certificates.server())
            child.readData(to: Data("\n".utf8), withTimeout: 10, tag: 1)
        }
        listener.onRead = { sock, data, _ in
            sock.write(Data("echo: ".utf8) + data, withTimeout: 10, tag: 2)
        }
        let socket = GCDAsyncSocket(delegate: listener, delegateQueue: listener.queue)
        try socket.accept(onInterface: "127.0.0.1", port: 0)
        defer {
            socket.disconnect()
            for child in listener.acceptedSockets { child.disconnect() }
        }
        let client = try PeerProcess([
            "openssl", "s_client", "-connect", "127.0.0.1:\(socket.localPort)", "-CAfile",
            certificates.certificatePath("ca"), "-verify_return_error", "-verify_ip", "127.0.0.1", "-quiet",
        ])
        defer { client.kill() }
        client.send("from openssl\n")
        #expect(try await client.line(startingWith: "echo:") == "echo: from openssl")
    }

    @Test(arguments: [
        ("other", "localhost", "a certificate for another name"),
        ("expired", "localhost", "an expired certificate"),
        ("selfsigned", "localhost", "a self-signed certificate"),
    ])
    func untrustedServersAreRefused(certificate: String, host: String, reason: String) async throws {
        let server = try openSSLServer(certificate: certificate)
        defer { server.kill() }
        let port = try await server.port()
        let (socket, recorder) = try secureClient(port: port, host: host, settings: try certificates.client())
        socket.write(Data("never sent\n".utf8), withTimeout: 10, tag: 1)
        let error = try #require(try await recorder.waitForDisconnect(), "\(reason)")
        #expect(error.code == .other)
        #expect(error.domain == .tls)
        #expect(error.underlying != nil)
        #expect(error.pendingWriteTags == [1])
        #expect(!recorder.events.contains(.secured))
    }

    @Test func connectingByNameChecksTheNameButAnIPLiteralDoesNotUnlessAPeerNameIsSet() async throws {
        // "other" is valid for other.example only.
        let server = try await PeerProcess.pythonServer(certificate: "other", ["--accept", "3"])
        defer { server.kill() }
        let port = try await server.port()
        let byIP = try secureClient(port: port, settings: try certificates.client())
        defer { byIP.0.disconnect() }
        try await byIP.1.wait { $0.contains(.secured) }

        let named = try secureClient(port: port, settings: try certificates.client(peerName: "localhost"))
        #expect(try await named.1.waitForDisconnect()?.domain == .tls)

        var unchecked = try certificates.client(peerName: "localhost")
        unchecked.verifiesPeerName = false
        let relaxed = try secureClient(port: port, settings: unchecked)
        defer { relaxed.0.disconnect() }
        try await relaxed.1.wait { $0.contains(.secured) }
    }

    @Test func pinnedPublicKeysAreEnforced() async throws {
        let server = try await PeerProcess.pythonServer(["--accept", "2"])
        defer { server.kill() }
        let port = try await server.port()
        var pinned = try certificates.client()
        pinned.pinnedPublicKeyHashes = [try await certificates.spkiHash("server")]
        let good = try secureClient(port: port, host: "localhost", settings: pinned)
        defer { good.0.disconnect() }
        try await good.1.wait { $0.contains(.secured) }

        pinned.pinnedPublicKeyHashes = [try await certificates.spkiHash("other")]
        let bad = try secureClient(port: port, host: "localhost", settings: pinned)
        let error = try #require(try await bad.1.waitForDisconnect())
        #expect(error.domain == .tls && error.code == .other)
        #expect(!bad.1.events.contains(.secured))
    }

    @Test(arguments: [true, false])
    func manualTrustDecidesFromAnotherThreadLaterAndTheFirstAnswerWins(accept: Bool) async throws {
        let server = try openSSLServer(certificate: "selfsigned")
        defer { server.kill() }
        let port = try await server.port()
        var settings = TLSSettings()
        settings.manuallyEvaluatesTrust = true
        let (socket, recorder) = try secureClient(port: port, host: "localhost", settings: settings) {
            $0.trustAnswer = accept
            $0.trustAnswerDelay = 0.2
            $0.answersTrustRepeatedly = true
        }
        defer { socket.disconnect() }
        if accept {
            socket.write(Data("trusted\n".utf8), withTimeout: 10, tag: 1)
            socket.readData(to: Data("\n".utf8), withTimeout: 10, tag: 2)
            try await recorder.wait { $0.contains(.read(Data("detsurt\n".utf8), tag: 2)) }
            #expect(socket.isSecure)
        } else {
            let error = try #require(try await recorder.waitForDisconnect())
            #expect(error.domain == .tls && error.code == .other)
            #expect(error.message == "Peer certificate rejected")
        }
        #expect(recorder.events.contains(.trustAsked(peerName: "localhost", certificates: 1)))
    }

    @Test func aServerCanEvaluateClientCertificatesManually() async throws {
        let listener = SocketRecorder(label: "manual-server")
        listener.onAccept = { _, child in
            var settings = try? certificates.server()
            settings?.clientCertificateVerification = .required
            settings?.manuallyEvaluatesTrust = true
            child.startTLS(settings)
            child.readData(to: Data("\n".utf8), withTimeout: 10, tag: 1)
        }
        listener.onRead = { sock, data, _ in sock.write(data, withTimeout: 10, tag: 2) }
        let socket = GCDAsyncSocket(delegate: listener, delegateQueue: listener.queue)
        try socket.accept(onInterface: "127.0.0.1", port: 0)
        defer {
            socket.disconnect()
            for child in listener.acceptedSockets { child.disconnect() }
        }
        let client = try PeerProcess.python([
            "client", "--port", "\(socket.localPort)", "--ca", certificates.certificatePath("ca"),
            "--server-name", "localhost", "--cert", certificates.certificatePath("client"),
            "--key", certificates.keyPath("client"),
        ])
        defer { client.kill() }
        #expect(try await client.line(startingWith: "GOT") == "GOT hello over tls")
        // The client presents its certificate (OpenSSL may add the CA it chains to); a server has no peer name.
        #expect(listener.events.contains { if case .trustAsked(nil, let count) = $0 { count >= 1 } else { false } })
    }

    @Test func aRequiredClientCertificateThatIsMissingFailsTheHandshake() async throws {
        let server = try openSSLServer(["-Verify", "1", "-CAfile", certificates.certificatePath("ca")])
        defer { server.kill() }
        let port = try await server.port()
        let (missing, missingRecorder) = try secureClient(
            port: port,
            host: "localhost",
            settings: try certificates.client()
        )
        missing.write(Data("x\n".utf8), withTimeout: 10, tag: 1)
        missing.readData(to: Data("\n".utf8), withTimeout: 10, tag: 2)
        let error = try #require(try await missingRecorder.waitForDisconnect())
        #expect(error.domain == .tls)

        var withCertificate = try certificates.client()
        withCertificate.certificateChain = [try certificates.certificate("client")]
        withCertificate.privateKey = try certificates.key("client")
        let (present, presentRecorder) = try secureClient(port: port, host: "localhost", settings: withCertificate)
        defer { present.disconnect() }
        present.write(Data("ab\n".utf8), withTimeout: 10, tag: 1)
        present.readData(to: Data("\n".utf8), withTimeout: 10, tag: 2)
        try await presentRecorder.wait { $0.contains(.read(Data("ba\n".utf8), tag: 2)) }
    }

    @Test func aTLS13OnlyClientFailsCleanlyAgainstATLS12OnlyServer() async throws {
        let server = try openSSLServer(["-tls1_2"])
        defer { server.kill() }
        let port = try await server.port()
        var settings = try certificates.client()
        settings.minimumTLSVersion = .tlsv13
        let (socket, recorder) = try secureClient(port: port, host: "localhost", settings: settings)
        let error = try #require(try await recorder.waitForDisconnect())
        #expect(error.domain == .tls && error.code == .other)
        _ = socket

        settings.minimumTLSVersion = .tlsv12
        let (fallback, fallbackRecorder) = try secureClient(port: port, host: "localhost", settings: settings)
        defer { fallback.disconnect() }
        try await fallbackRecorder.wait { $0.contains(.secured) }
    }

    @Test func plaintextPeersFailTheHandshakeAndNeverHang() async throws {
        // A TLS client against a plain echo server: the "ServerHello" is its own ClientHello echoed back.
        let echo = try EchoServer()
        defer { echo.stop() }
        let (socket, recorder) = try secureClient(port: Int(echo.port), settings: try certificates.client())
        let error = try #require(try await recorder.waitForDisconnect())
        #expect(error.domain == .tls)
        _ = socket

        // A TLS server receiving plaintext.
        let listener = SocketRecorder(label: "tls-server-plain")
        let server = GCDAsyncSocket(delegate: listener, delegateQueue: listener.queue)
        listener.onAccept = { _, child in
            child.startTLS(try? certificates.server())
            child.readData(withTimeout: 10, tag: 1)
        }
        try server.accept(onInterface: "127.0.0.1", port: 0)
        defer { server.disconnect() }
        let peer = try RawPeer.connect(port: server.localPort)
        defer { peer.close() }
        peer.send("GET / HTTP/1.0\r\n\r\n")
        try await listener.wait { $0.contains { $0.isDisconnect } }
        #expect(listener.lastError?.domain == .tls)
    }

    @Test func badSettingsCloseWithBadConfigAndASecondStartTLSIsIgnored() async throws {
        let echo = try EchoServer()
        defer { echo.stop() }
        var serverWithoutKey = TLSSettings(isServer: true)
        serverWithoutKey.certificateChain = [try certificates.certificate("server")]
        var shortPin = try certificates.client()
        shortPin.pinnedPublicKeyHashes = [[UInt8](repeating: 0, count: 31)]
        for settings in [serverWithoutKey, shortPin] {
            let (socket, recorder) = try secureClient(port: Int(echo.port), settings: settings)
            _ = socket
            #expect(try await recorder.waitForDisconnect()?.code == .badConfig)
        }

        // Before the socket is started, startTLS is dropped.
        let idle = GCDAsyncSocket(delegate: SocketRecorder(), delegateQueue: .main)
        idle.startTLS(nil)
        #expect(!idle.isSecure && idle.isDisconnected)

        let server = try openSSLServer()
        defer { server.kill() }
        let port = try await server.port()
        let (socket, recorder) = try secureClient(port: port, host: "localhost", settings: try certificates.client())
        defer { socket.disconnect() }
        socket.startTLS(serverWithoutKey)
        socket.write(Data("one\n".utf8), withTimeout: 10, tag: 1)
        socket.readData(to: Data("\n".utf8), withTimeout: 10, tag: 2)
        try await recorder.wait { $0.contains(.read(Data("eno\n".utf8), tag: 2)) }
        #expect(recorder.events.filter { $0 == .secured }.count == 1)
        #expect(!recorder.events.contains { $0.isDisconnect })
    }

    @Test func aReadQueuedBeforeStartTLSCompletesInPlaintextBeforeTheHandshake() async throws {
        // SMTP-like: the server greets in plaintext, reads STARTTLS, then upgrades.
        let server = try await PeerProcess.pythonServer(["--starttls", "--greeting", "220 ready"])
        defer { server.kill() }
        let port = try await server.port()
        let recorder = SocketRecorder(label: "greeted-client")
        let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        defer { socket.disconnect() }
        try socket.connect(toHost: "localhost", onPort: UInt16(port), withTimeout: 10)
        socket.readData(to: Data("\n".utf8), withTimeout: 10, tag: 1)
        socket.write(Data("STARTTLS\n".utf8), withTimeout: 10, tag: 2)
        socket.startTLS(try certificates.client())
        socket.write(Data("after\n".utf8), withTimeout: 10, tag: 3)
        socket.readData(to: Data("\n".utf8), withTimeout: 10, tag: 4)
        let events = try await recorder.wait { $0.contains(.read(Data("after\n".utf8), tag: 4)) }
        let greeting = try #require(events.firstIndex(of: .read(Data("220 ready\n".utf8), tag: 1)))
        #expect(greeting < events.firstIndex(of: .secured)!)
        #expect(events.firstIndex(of: .wrote(tag: 2))! < events.firstIndex(of: .secured)!)
    }

    @Test func versionsAndCipherSuitesAreHonoured() async throws {
        let server = try await PeerProcess.pythonServer(["--accept", "1"])
        defer { server.kill() }
        let port = try await server.port()
        var settings = try certificates.client()
        settings.maximumTLSVersion = .tlsv12
        settings.cipherSuites = [.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]
        let (socket, recorder) = try secureClient(port: port, host: "localhost", settings: settings)
        defer { socket.disconnect() }
        try await recorder.wait { $0.contains(.secured) }
        #expect(try await server.line(startingWith: "SECURE") == "SECURE TLSv1.2 - ECDHE-RSA-AES128-GCM-SHA256")
    }
}
