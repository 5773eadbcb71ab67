import ArgumentParser
import NIOSSL
import TetherSockets

/// `--tls`, `--cert`, `--key`, `--ca`, `--insecure`: how `nc` and `serve` secure their TCP connections.
struct TLSOptions: ParsableArguments {
    @Flag(help: "Use TLS.")
    var tls = false

    @Option(help: "PEM certificate chain to present (required to serve TLS; a client certificate for nc).")
    var cert: String?

    @Option(help: "PEM private key of --cert.")
    var key: String?

    @Option(help: "PEM file of roots to trust instead of the system store.")
    var ca: String?

    @Flag(help: "Verify nothing about the server's certificate (testing only).")
    var insecure = false

    /// Checks the combination; `server` when the command accepts instead of connecting.
    func check(server: Bool, udp: Bool) throws {
        let used = tls || cert != nil || key != nil || ca != nil || insecure
        guard used else { return }
        if udp { throw ValidationError("--tls does not go with --udp.") }
        if !tls { throw ValidationError("--cert, --key, --ca and --insecure need --tls.") }
        if (cert == nil) != (key == nil) { throw ValidationError("--cert and --key go together.") }
        if server && cert == nil { throw ValidationError("Serving TLS needs --cert and --key.") }
        if server && insecure { throw ValidationError("--insecure is for clients.") }
    }

    /// The settings for a server, or nil without `--tls`.
    func serverSettings() throws -> TLSSettings? {
        guard tls, let cert, let key else { return nil }
        var settings = TLSSettings.server(
            certificateChain: try NIOSSLCertificate.fromPEMFile(cert),
            privateKey: try NIOSSLPrivateKey(file: key, format: .pem)
        )
        if let ca {
            settings.trustRoots = .file(ca)
            settings.clientCertificateVerification = .optional
        }
        return settings
    }

    /// The settings for a client, or nil without `--tls`.
    func clientSettings() throws -> TLSSettings? {
        guard tls else { return nil }
        var settings = TLSSettings.client()
        if let cert, let key {
            settings.certificateChain = try NIOSSLCertificate.fromPEMFile(cert)
            settings.privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
        }
        if let ca { settings.trustRoots = .file(ca) }
        settings.skipsVerification = insecure
        return settings
    }
}
