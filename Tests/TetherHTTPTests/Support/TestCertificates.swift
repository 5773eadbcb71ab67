import Foundation
import NIOSSL
import TetherTestSupport

/// A CA and a server certificate for 127.0.0.1, made with the `openssl` CLI when the tests start.
final class TestCertificates: Sendable {
    /// The run's certificates, made on a thread of their own the first time a test asks (two RSA keys take
    /// seconds on a busy machine; see ``TestServer/http()`` for why not in place).
    static func shared() async throws -> TestCertificates {
        try SystemRequirements.tool("openssl", for: "the HTTPS tests' certificates")
        return try await making.value
    }

    private static let making = Task { try await offPool { try TestCertificates() } }

    let directory: URL
    let caCertificatePath: String
    let serverCertificatePath: String
    let serverKeyPath: String

    private init() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tether-http-tls-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory
        self.caCertificatePath = directory.appendingPathComponent("ca.pem").path
        self.serverCertificatePath = directory.appendingPathComponent("server.pem").path
        self.serverKeyPath = directory.appendingPathComponent("server.key").path
        let caKey = directory.appendingPathComponent("ca.key").path
        let csr = directory.appendingPathComponent("server.csr").path
        let extensions = directory.appendingPathComponent("server.ext").path
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n".write(
            toFile: extensions,
            atomically: true,
            encoding: .utf8
        )
        try Self.openssl([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", caKey, "-out", self.caCertificatePath,
            "-days", "2", "-subj", "/CN=Tether Test CA",
        ])
        try Self.openssl([
            "req", "-newkey", "rsa:2048", "-nodes", "-keyout", self.serverKeyPath, "-out", csr, "-subj",
            "/CN=127.0.0.1",
        ])
        try Self.openssl([
            "x509", "-req", "-in", csr, "-CA", self.caCertificatePath, "-CAkey", caKey, "-CAcreateserial", "-out",
            self.serverCertificatePath, "-days", "2", "-extfile", extensions,
        ])
    }

    /// A client TLS configuration that trusts only the test CA.
    func trustingConfiguration() throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(self.caCertificatePath))
        return configuration
    }

    private static func openssl(_ arguments: [String]) throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw POSIXError(.EIO) }
    }
}
