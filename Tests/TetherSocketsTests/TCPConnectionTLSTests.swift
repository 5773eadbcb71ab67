import Crypto
import Foundation
import NIOCore
import NIOSSL
import Testing

@testable import TetherSockets

/// The async face with TLS: `connect(tls:)`, `bind(tls:)`, `startTLS`, against Python's `ssl` and itself.
@Suite(.timeLimit(.minutes(3)))
struct TCPConnectionTLSTests {
    let certificates: TLSTestCertificates

    init() async throws {
        certificates = try await TLSTestCertificates.shared()
    }

    /// An echo server on the async face, each connection in its own task.
    func echoListener(_ settings: TLSSettings) async throws -> (TCPListener, Task<Void, any Error>) {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0, tls: settings)
        let task = Task {
            try await withThrowingDiscardingTaskGroup { group in
                for try await connection in listener.connections {
                    group.addTask {
                        while let bytes = try await connection.readAvailable() {
                            try await connection.write(bytes)
                        }
                        try await connection.close()
                    }
                }
            }
        }
        return (listener, task)
    }

    @Test func connectAndBindWithTLSNegotiateALPNAndCarryData() async throws {
        var server = try certificates.server()
        server.applicationProtocols = ["tether/1", "h2"]
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0, tls: server)
        var client = try certificates.client()
        client.applicationProtocols = ["tether/1"]
        async let accepted = listener.connections.first { _ in true }
        let connection = try await TCPConnection.connect(host: "localhost", port: listener.localPort, tls: client)
        let serverSide = try #require(try await accepted)
        #expect(connection.isSecure && serverSide.isSecure)
        #expect(connection.negotiatedApplicationProtocol == "tether/1")
        #expect(serverSide.negotiatedApplicationProtocol == "tether/1")
        try await connection.write(ByteBuffer(string: "ping\n"))
        #expect(String(buffer: try await serverSide.read(upTo: [0x0A], timeout: .seconds(10))) == "ping\n")
        try await serverSide.write(ByteBuffer(string: "pong\n"))
        #expect(String(buffer: try await connection.read(upTo: [0x0A], timeout: .seconds(10))) == "pong\n")
        try await connection.close()
        try await serverSide.close()
        try await listener.close()
    }

    @Test(arguments: [100 * 1024, 100 * 1024 * 1024])
    func transfersArriveIntactBothWays(size: Int) async throws {
        let sink = try await PeerProcess.pythonServer(["--mode", "sink"])
        defer { sink.kill() }
        let upload = try await TCPConnection.connect(
            host: "localhost",
            port: try await sink.port(),
            tls: try certificates.client()
        )
        var header = ByteBuffer()
        header.writeInteger(UInt64(size))
        try await upload.write(header)
        let payload = ByteBuffer(bytes: (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) })
        try await upload.write(payload)
        let reply = String(buffer: try await upload.read(upTo: [0x0A], timeout: .seconds(60)))
        let expected = SHA256.hash(data: Array(payload.readableBytesView)).map { String(format: "%02x", $0) }
            .joined()
        #expect(reply == "\(size) \(expected)\n")
        try await upload.close()

        let source = try await PeerProcess.pythonServer(["--mode", "source:\(size)"])
        defer { source.kill() }
        let download = try await TCPConnection.connect(
            host: "127.0.0.1",
            port: try await source.port(),
            tls: try certificates.client()
        )
        var hasher = SHA256()
        var received = 0
        while received < size, let chunk = try await download.readAvailable(maxLength: 1 << 20, timeout: .seconds(60)) {
            hasher.update(data: Array(chunk.readableBytesView))
            received += chunk.readableBytes
        }
        let pattern = (0..<(251 * 4096)).map { UInt8($0 % 251) }
        var reference = SHA256()
        var left = size
        while left > 0 {
            let count = min(left, pattern.count)
            reference.update(data: pattern[0..<count])
            left -= count
        }
        #expect(received == size)
        #expect(Array(hasher.finalize()) == Array(reference.finalize()))
        try await download.close()
    }

    @Test func twoHundredConcurrentClients() async throws {
        let (listener, serverTask) = try await echoListener(try certificates.server())
        defer { serverTask.cancel() }
        let port = listener.localPort
        let settings = try certificates.client()
        let replies = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<200 {
                group.addTask {
                    let connection = try await TCPConnection.connect(
                        host: "localhost",
                        port: port,
                        timeout: .seconds(60),
                        tls: settings
                    )
                    let line = "client \(index)\n"
                    try await connection.write(ByteBuffer(string: line))
                    let echoed = try await connection.read(upTo: [0x0A], timeout: .seconds(60))
                    try await connection.close()
                    return String(buffer: echoed) == line
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(replies.count == 200)
        #expect(replies.allSatisfy { $0 })
        try await listener.close()
    }

    @Test func startTLSUpgradesAPlaintextConnection() async throws {
        let server = try await PeerProcess.pythonServer(["--starttls"])
        defer { server.kill() }
        let connection = try await TCPConnection.connect(host: "localhost", port: try await server.port())
        #expect(!connection.isSecure)
        try await connection.write(ByteBuffer(string: "STARTTLS\n"))
        try await connection.startTLS(try certificates.client())
        #expect(connection.isSecure)
        try await connection.write(ByteBuffer(string: "encrypted\n"))
        #expect(String(buffer: try await connection.read(upTo: [0x0A], timeout: .seconds(10))) == "encrypted\n")
        let second = await #expect(throws: GCDAsyncSocketError.self) {
            try await connection.startTLS(try certificates.client())
        }
        #expect(second?.code == .badConfig)
        #expect(try await server.line(startingWith: "PLAIN") == "PLAIN STARTTLS")
        try await connection.close()
    }

    @Test func untrustedServersThrowTLSErrors() async throws {
        let server = try await PeerProcess.pythonServer(certificate: "other")
        defer { server.kill() }
        do {
            _ = try await TCPConnection.connect(
                host: "localhost",
                port: try await server.port(),
                tls: try certificates.client()
            )
            Issue.record("a certificate for another name must be refused")
        } catch let error as GCDAsyncSocketError {
            #expect(error.code == .other && error.domain == .tls)
            #expect(error.underlying is NIOSSLExtraError)  // the name check: "Couldn't find localhost in certificate"
        }
    }

    @Test func theConnectTimeoutCoversTheHandshake() async throws {
        // The kernel completes the TCP handshake from the backlog; nobody ever answers the ClientHello.
        let silent = try RawListener()
        defer { silent.close() }
        let started = ContinuousClock.now
        let error = await #expect(throws: GCDAsyncSocketError.self) {
            _ = try await TCPConnection.connect(
                host: "127.0.0.1",
                port: Int(silent.port),
                timeout: .milliseconds(500),
                tls: try certificates.client()
            )
        }
        #expect(error?.code == .connectTimeout)
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test func aListenerNeverYieldsClientsWhoseHandshakeFails() async throws {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0, tls: try certificates.server())
        let plaintext = try RawPeer.connect(port: UInt16(listener.localPort))
        defer { plaintext.close() }
        plaintext.send("GET / HTTP/1.1\r\n\r\n")
        // The listener closes it (after a TLS alert, if any): reading ends instead of waiting for the 10 s timeout.
        let started = ContinuousClock.now
        _ = try await onThread { plaintext.receiveToEnd() }
        #expect(ContinuousClock.now - started < .seconds(9))
        async let first = listener.connections.first { _ in true }
        let good = try await TCPConnection.connect(
            host: "127.0.0.1",
            port: listener.localPort,
            tls: try certificates.client()
        )
        let accepted = try #require(try await first)
        #expect(accepted.remoteAddress.port == good.localAddress.port)
        try await good.close()
        try await accepted.close()
        try await listener.close()
    }

    /// A client whose handshake fails never reaches the consumer, and it gives its pending slot back: with room for
    /// one pending connection, two failed clients in a row still leave room for the good one.
    @Test func aFailedHandshakeGivesItsPendingSlotBack() async throws {
        let listener = try await TCPListener.bind(
            host: "127.0.0.1",
            port: 0,
            tls: try certificates.server(),
            maxPendingConnections: 1
        )
        for _ in 0..<2 {
            let plaintext = try RawPeer.connect(port: UInt16(listener.localPort))
            plaintext.send("GET / HTTP/1.1\r\n\r\n")
            _ = try await onThread { plaintext.receiveToEnd() }
            plaintext.close()
        }
        async let first = listener.connections.first { _ in true }
        let good = try await TCPConnection.connect(
            host: "127.0.0.1",
            port: listener.localPort,
            tls: try certificates.client()
        )
        let accepted = try #require(try await first)
        #expect(accepted.remoteAddress.port == good.localAddress.port)
        #expect(listener.gate.snapshot.outstanding == 0)
        try await good.close()
        try await accepted.close()
        try await listener.close()
    }

    @Test func badTLSSettingsThrowBadConfig() async throws {
        var manual = try certificates.client()
        manual.manuallyEvaluatesTrust = true
        var serverWithoutKey = TLSSettings(isServer: true)
        serverWithoutKey.certificateChain = [try certificates.certificate("server")]
        var longPin = try certificates.client()
        longPin.pinnedPublicKeyHashes = [[UInt8](repeating: 1, count: 33)]
        for settings in [manual, try certificates.server(), longPin] {
            let error = await #expect(throws: GCDAsyncSocketError.self) {
                _ = try await TCPConnection.connect(host: "127.0.0.1", port: 9, tls: settings)
            }
            #expect(error?.code == .badConfig)
        }
        for settings in [try certificates.client(), serverWithoutKey] {
            let error = await #expect(throws: GCDAsyncSocketError.self) {
                _ = try await TCPListener.bind(host: "127.0.0.1", port: 0, tls: settings)
            }
            #expect(error?.code == .badConfig)
        }
    }

    @Test func closingReleasesTheChannelWithoutWaitingForTLSShutdownTimeout() async throws {
        // NIOSSL waits for the peer's close_notify up to its shutdown timeout; with remote half-closure allowed the
        // peer's answer used to leave the channel (and its memory) open that long after every close. The timeout
        // is made 5 minutes here: the channel must close long before (the peer answers at once).
        let server = try await PeerProcess.pythonServer()
        defer { server.kill() }
        var settings = try certificates.client()
        settings.shutdownTimeout = .minutes(5)
        let connection = try await TCPConnection.connect(
            host: "localhost",
            port: try await server.port(),
            tls: settings
        )
        try await connection.write(ByteBuffer(string: "x"))
        _ = try await connection.read(toLength: 1, timeout: .seconds(10))
        try await connection.close()
        let closed = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await connection.channel.closeFuture.get()
                return true
            }
            group.addTask {
                try await Task.sleep(for: .seconds(60))
                return false
            }
            let first = try await group.next()!
            group.cancelAll()
            return first
        }
        #expect(closed, "the channel was still open a minute after close()")
    }
}
