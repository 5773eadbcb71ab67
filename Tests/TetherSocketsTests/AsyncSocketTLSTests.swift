import Foundation
import NIOSSL
import Testing
import TetherSockets

/// `AsyncSocket.startTLS` with the `kCFStreamSSL…` dictionary, against `openssl s_server` and between two sockets.
@Suite("AsyncSocket (RunLoop era): startTLS with the kCFStreamSSL dictionary", .timeLimit(.minutes(1)))
struct AsyncSocketTLSTests {
    let certificates: TLSTestCertificates

    init() async throws {
        certificates = try await TLSTestCertificates.shared()
    }

    func openSSLServer(certificate: String = "server") throws -> PeerProcess {
        try PeerProcess(
            [
                "openssl", "s_server", "-accept", "0", "-cert", certificates.certificatePath(certificate),
                "-key", certificates.keyPath(certificate), "-rev",
            ]
        )
    }

    /// A client on its own run loop thread, connected to `port`, with `startTLS(settings)` queued after a plain
    /// write... of nothing: the TLS request is the first thing queued.
    func secureClient(
        port: Int,
        settings: [String: Any]?
    ) async throws -> (RunLoopThread, AsyncSocket, RunLoopSocketRecorder) {
        let home = RunLoopThread(name: "tls-client")
        let recorder = RunLoopSocketRecorder()
        recorder.expectedRunLoop = home.runLoop
        let socket = AsyncSocket(delegate: recorder)
        // Sendable: the dictionary holds Sendable values only (strings, booleans, certificates).
        let box = UnsafeSettings(settings)
        try await home.sync {
            try socket.connect(toHost: "localhost", onPort: UInt16(port), withTimeout: 10)
            socket.startTLS(box.value)
        }
        return (home, socket, recorder)
    }

    @Test("allows-any-root with the server's name: secured against openssl s_server, data both ways after it")
    func anyRootWithNameAgainstOpenSSL() async throws {
        let server = try openSSLServer()
        defer { server.kill() }
        let port = try await server.port()
        let settings: [String: Any] = [kCFStreamSSLAllowsAnyRoot: true, kCFStreamSSLPeerName: "localhost"]
        let (home, socket, recorder) = try await secureClient(port: port, settings: settings)
        defer {
            socket.disconnect()
            home.stop()
        }
        // A second startTLS is ignored (with nil settings it would refuse this server's private root).
        socket.startTLS(nil)
        socket.write(Data("hello tls\n".utf8), withTimeout: 10, tag: 1)
        socket.readData(to: Data("\n".utf8), withTimeout: 10, tag: 2)
        let events = try await recorder.wait { $0.contains(.read(Data("slt olleh\n".utf8), tag: 2)) }
        #expect(events.firstIndex(of: .secured)! < events.firstIndex(of: .wrote(tag: 1))!)
        #expect(events.filter { $0 == .secured }.count == 1)
        #expect(recorder.violations.isEmpty)
    }

    @Test("nil settings verify the chain against the system roots: a private CA fails with -9812 in the SSL domain")
    func defaultSettingsRefuseAnUnknownRoot() async throws {
        let server = try openSSLServer()
        defer { server.kill() }
        let port = try await server.port()
        let (home, socket, recorder) = try await secureClient(port: port, settings: nil)
        defer {
            socket.disconnect()
            home.stop()
        }
        let events = try await recorder.waitForDisconnect()
        #expect(events.suffix(2) == [.willDisconnect(domain: "kCFStreamErrorDomainSSL", code: -9812), .disconnected])
        #expect(!events.contains(.secured))
    }

    @Test("allows-any-root still checks a given peer name: a mismatch fails with -9843")
    func anyRootWithTheWrongName() async throws {
        let server = try openSSLServer()
        defer { server.kill() }
        let port = try await server.port()
        let settings: [String: Any] = [kCFStreamSSLAllowsAnyRoot: true, kCFStreamSSLPeerName: "example.org"]
        let (home, socket, recorder) = try await secureClient(port: port, settings: settings)
        defer {
            socket.disconnect()
            home.stop()
        }
        let events = try await recorder.waitForDisconnect()
        #expect(events.suffix(2) == [.willDisconnect(domain: "kCFStreamErrorDomainSSL", code: -9843), .disconnected])
    }

    @Test("validates-chain false and no name: any certificate is accepted, even a self-signed one")
    func noChainValidation() async throws {
        let server = try openSSLServer(certificate: "selfsigned")
        defer { server.kill() }
        let port = try await server.port()
        let settings: [String: Any] = [kCFStreamSSLValidatesCertificateChain: false, kCFStreamSSLPeerName: NSNull()]
        let (home, socket, recorder) = try await secureClient(port: port, settings: settings)
        defer {
            socket.disconnect()
            home.stop()
        }
        socket.write(Data("abc\n".utf8), withTimeout: 10, tag: 1)
        socket.readData(to: Data("\n".utf8), withTimeout: 10, tag: 2)
        try await recorder.wait { $0.contains(.read(Data("cba\n".utf8), tag: 2)) }
    }

    @Test(
        "trust roots of one's own (kTetherStreamSSLTrustRoots): the chain verifies, no name is checked by default; a TLSv1 level and unknown keys are accepted"
    )
    func ownTrustRoots() async throws {
        let server = try openSSLServer(certificate: "other")
        defer { server.kill() }
        let port = try await server.port()
        // Also: the TLS 1.0 floor of kCFStreamSocketSecurityLevelTLSv1 is accepted, and an unknown key is ignored.
        let settings: [String: Any] = [
            kTetherStreamSSLTrustRoots: [try certificates.certificate("ca")],
            kCFStreamSSLLevel: kCFStreamSocketSecurityLevelTLSv1, "kCFStreamPropertySocketSecurityLevel": 42,
        ]
        let (home, socket, recorder) = try await secureClient(port: port, settings: settings)
        defer {
            socket.disconnect()
            home.stop()
        }
        socket.write(Data("abc\n".utf8), withTimeout: 10, tag: 1)
        socket.readData(to: Data("\n".utf8), withTimeout: 10, tag: 2)
        try await recorder.wait { $0.contains(.read(Data("cba\n".utf8), tag: 2)) }
    }

    @Test("with one's own roots and a peer name, a certificate for another name fails with -9843")
    func ownTrustRootsAndTheWrongName() async throws {
        let server = try openSSLServer(certificate: "other")
        defer { server.kill() }
        let port = try await server.port()
        let settings: [String: Any] = [
            kTetherStreamSSLTrustRoots: [try certificates.certificate("ca")], kCFStreamSSLPeerName: "localhost",
        ]
        let (home, socket, recorder) = try await secureClient(port: port, settings: settings)
        defer {
            socket.disconnect()
            home.stop()
        }
        let events = try await recorder.waitForDisconnect()
        #expect(events.suffix(2) == [.willDisconnect(domain: "kCFStreamErrorDomainSSL", code: -9843), .disconnected])
    }

    @Test("an expired certificate fails with -9814; allows-expired-certificates accepts it", arguments: [false, true])
    func expiredCertificates(allowsExpired: Bool) async throws {
        let server = try openSSLServer(certificate: "expired")
        defer { server.kill() }
        let port = try await server.port()
        var settings: [String: Any] = [
            kTetherStreamSSLTrustRoots: [try certificates.certificate("ca")], kCFStreamSSLPeerName: "localhost",
        ]
        if allowsExpired { settings[kCFStreamSSLAllowsExpiredCertificates] = true }
        let (home, socket, recorder) = try await secureClient(port: port, settings: settings)
        defer {
            socket.disconnect()
            home.stop()
        }
        if allowsExpired {
            socket.write(Data("abc\n".utf8), withTimeout: 10, tag: 1)
            socket.readData(to: Data("\n".utf8), withTimeout: 10, tag: 2)
            try await recorder.wait { $0.contains(.read(Data("cba\n".utf8), tag: 2)) }
        } else {
            let events = try await recorder.waitForDisconnect()
            #expect(
                events.suffix(2) == [.willDisconnect(domain: "kCFStreamErrorDomainSSL", code: -9814), .disconnected]
            )
        }
    }

    /// Bad entries of the dictionary.
    enum BadEntry: String, CaseIterable, Sendable {
        case peerNameNumber, anyRootString, certificatesStrings, levelSSLv3

        var entry: (key: String, value: Any) {
            switch self {
            case .peerNameNumber: (kCFStreamSSLPeerName, 42)
            case .anyRootString: (kCFStreamSSLAllowsAnyRoot, "yes")
            case .certificatesStrings: (kCFStreamSSLCertificates, ["not a certificate"])
            case .levelSSLv3: (kCFStreamSSLLevel, kCFStreamSocketSecurityLevelSSLv3)
            }
        }
    }

    @Test(
        "a known key with a value of the wrong type, or a refused level, closes with code -1 naming the key",
        arguments: BadEntry.allCases
    )
    func wrongTypesClose(bad: BadEntry) async throws {
        let (key, value) = bad.entry
        let server = try openSSLServer()
        defer { server.kill() }
        let port = try await server.port()
        let (home, socket, recorder) = try await secureClient(port: port, settings: [key: value, "unknownKey": 1])
        defer {
            socket.disconnect()
            home.stop()
        }
        let events = try await recorder.waitForDisconnect()
        #expect(events.suffix(2) == [.willDisconnect(domain: AsyncSocketErrorDomain, code: -1), .disconnected])
        let error = try #require(recorder.errors.last as? AsyncSocketError)
        #expect(error.code == .cfSocketError)
        #expect(String(describing: error.underlying.map { "\($0)" } ?? "").contains(key))
    }

    @Test("two AsyncSockets: the server role from the dictionary (is-server, certificates, private key)")
    func serverRoleBetweenTwoSockets() async throws {
        let home = RunLoopThread(name: "tls-server")
        defer { home.stop() }
        let serverRecorder = RunLoopSocketRecorder()
        let chain = [try certificates.certificate("server")]
        let key = try certificates.key("server")
        let serverSettings = UnsafeSettings([
            kCFStreamSSLIsServer: true, kCFStreamSSLCertificates: chain, kTetherStreamSSLPrivateKey: key,
        ])
        serverRecorder.onConnect = { child in
            child.startTLS(serverSettings.value)
            child.readData(to: Data("\n".utf8), withTimeout: 10, tag: 1)
        }
        serverRecorder.onRead = { child, data, _ in child.write(Data("echo: ".utf8) + data, withTimeout: 10, tag: 2) }
        let listener = AsyncSocket(delegate: serverRecorder)
        try await home.sync { try listener.accept(onInterface: "127.0.0.1", port: 0) }
        defer { listener.disconnect() }
        let clientSettings: [String: Any] = [
            kCFStreamSSLAllowsAnyRoot: true, kCFStreamSSLPeerName: "localhost",
            kCFStreamSSLLevel: kCFStreamSocketSecurityLevelNegotiatedSSL,
        ]
        let (clientHome, client, clientRecorder) = try await secureClient(
            port: Int(listener.localPort()),
            settings: clientSettings
        )
        defer {
            client.disconnect()
            clientHome.stop()
            for child in serverRecorder.acceptedSockets { child.disconnect() }
        }
        client.write(Data("ping\n".utf8), withTimeout: 10, tag: 1)
        client.readData(to: Data("\n".utf8), withTimeout: 10, tag: 2)
        try await clientRecorder.wait { $0.contains(.read(Data("echo: ping\n".utf8), tag: 2)) }
        #expect(serverRecorder.events.contains(.secured))
        #expect(clientRecorder.events.contains(.secured))
    }
}

/// The settings dictionary carried to a run-loop thread.
struct UnsafeSettings: @unchecked Sendable {
    // Sendable: the tests put only Sendable values in it (strings, booleans, NSNull, NIOSSL certificates and keys).
    let value: [String: Any]?
    init(_ value: [String: Any]?) { self.value = value }
}
