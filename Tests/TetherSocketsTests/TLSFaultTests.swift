import Foundation
import NIOCore
import NIOSSL
import Testing

@testable import TetherSockets

/// Peers that break TLS on purpose: each ends the connection with a typed TLS error, on both
/// faces, and nothing hangs.
@Suite(.timeLimit(.minutes(1)))
struct TLSFaultTests {
    let certificates: TLSTestCertificates

    init() async throws {
        certificates = try await TLSTestCertificates.shared()
    }

    /// A plaintext server that reads the client's first bytes (its ClientHello), answers with `reply`, then closes
    /// or, with `keepOpen`, waits for the client to close.
    static func lyingServer(reply: [UInt8], keepOpen: Bool) async throws -> (TCPListener, Task<Void, any Error>) {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let task = Task {
            for try await connection in listener.connections {
                _ = try await connection.readAvailable(timeout: .seconds(10))
                try await connection.write(ByteBuffer(bytes: reply))
                if keepOpen {
                    while try await connection.readAvailable() != nil {}
                }
                try await connection.close()
                return
            }
        }
        return (listener, task)
    }

    /// The first bytes of a ServerHello record (type 22, TLS 1.2, length 64) and then nothing more.
    static let cutHandshake: [UInt8] = [0x16, 0x03, 0x03, 0x00, 0x40, 0x02, 0x00, 0x00, 0x3C, 0x03, 0x03]
    /// A handshake record whose header claims 18,433 bytes: more than any TLS record may hold (2^14 + 2,048).
    static let oversizedRecord: [UInt8] = [0x16, 0x03, 0x03, 0x48, 0x01] + [UInt8](repeating: 0, count: 64)

    @Test(
        "a handshake cut in the middle and an oversized record fail the delegate face with a TLS error",
        arguments: [(cutHandshake, false), (oversizedRecord, true)]
    )
    func delegateFace(reply: [UInt8], keepOpen: Bool) async throws {
        let (listener, server) = try await Self.lyingServer(reply: reply, keepOpen: keepOpen)
        defer { server.cancel() }
        let recorder = SocketRecorder(label: "tls-fault")
        let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        try socket.connect(toHost: "127.0.0.1", onPort: UInt16(listener.localPort), withTimeout: 10)
        socket.startTLS(try certificates.client())
        socket.readData(withTimeout: 30, tag: 1)
        let error = try #require(try await recorder.waitForDisconnect())
        #expect(error.domain == .tls, "\(error)")
        #expect(!socket.isSecure)
        try await listener.close()
    }

    @Test(
        "a handshake cut in the middle and an oversized record fail the async face's connect with a TLS error",
        arguments: [(cutHandshake, false), (oversizedRecord, true)]
    )
    func asyncFace(reply: [UInt8], keepOpen: Bool) async throws {
        let (listener, server) = try await Self.lyingServer(reply: reply, keepOpen: keepOpen)
        defer { server.cancel() }
        await #expect {
            _ = try await TCPConnection.connect(
                host: "127.0.0.1",
                port: listener.localPort,
                tls: try certificates.client()
            )
        } throws: { error in
            (error as? GCDAsyncSocketError)?.domain == .tls
        }
        try await listener.close()
    }

    @Test("a server's renegotiation request ends the connection with a TLS error: renegotiation is refused")
    func renegotiationIsRefused() async throws {
        // `openssl s_server` renegotiates when its standard input gives it "r" (TLS 1.2; TLS 1.3 has none).
        let server = try PeerProcess([
            "openssl", "s_server", "-accept", "0", "-tls1_2", "-cert", certificates.certificatePath("server"),
            "-key", certificates.keyPath("server"),
        ])
        defer { server.kill() }
        let port = try await server.port()
        var settings = try certificates.client()
        settings.maximumTLSVersion = .tlsv12
        let recorder = SocketRecorder(label: "tls-renegotiation")
        let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        try socket.connect(toHost: "localhost", onPort: UInt16(port), withTimeout: 10)
        socket.startTLS(settings)
        socket.readData(withTimeout: 30, tag: 1)
        _ = try await recorder.wait { $0.contains(.secured) }
        // s_server prints its session parameters once the handshake is done on its side; then ask it.
        _ = try await server.line(startingWith: "CIPHER is", "Shared ciphers", "---")
        server.send("r\n")
        let error = try #require(try await recorder.waitForDisconnect())
        #expect(error.domain == .tls, "\(error)")
        #expect("\(error)".contains("NO_RENEGOTIATION"), "\(error)")
    }
}
