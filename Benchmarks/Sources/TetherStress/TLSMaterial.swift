import Foundation
import NIOSSL
import TetherSockets

/// A P-256 key and a self-signed certificate for `localhost` and 127.0.0.1, made at run time by `openssl req` in a
/// temporary directory (removed by `remove()`).
struct TLSMaterial {
    let directory: String
    var certificatePath: String { "\(directory)/cert.pem" }
    var keyPath: String { "\(directory)/key.pem" }

    static func generate() throws -> TLSMaterial {
        let directory = NSTemporaryDirectory() + "tether-stress-tls-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let material = TLSMaterial(directory: directory)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", material.keyPath, "-out", material.certificatePath, "-days", "1", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ]
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try LaunchThread.shared.launch(process)
        // Polled, with a deadline: `waitUntilExit()` would run the calling thread's run loop, which Foundation
        // then keeps (three descriptors) for the thread's life.
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        guard process.terminationStatus == 0 else { throw StressError("openssl req failed") }
        return material
    }

    /// The client side: trusts only this certificate and verifies the name `localhost`.
    func clientSettings() -> TLSSettings {
        var settings = TLSSettings.client(peerName: "localhost")
        settings.trustRoots = .file(certificatePath)
        return settings
    }

    /// The arguments that give a peer the certificate and key.
    var peerArguments: [String] { ["--cert", certificatePath, "--key", keyPath] }

    func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }
}
