import Foundation
import NIOConcurrencyHelpers
import NIOSSL
import TetherSockets
import TetherTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Certificates made with the `openssl` CLI once per test run: a CA; a server certificate for localhost, 127.0.0.1
/// and ::1; an expired one; one for another host name; a self-signed one; a client certificate.
final class TLSTestCertificates: Sendable {
    /// The run's certificates, made on a thread of their own the first time a test asks.
    ///
    /// Not a `static let` made in place: six RSA keys take seconds on a busy 2-core machine, and every other task
    /// asking meanwhile would block its thread of the cooperative pool too. With both threads blocked, every test of
    /// the run stalls, while the sockets' timers keep running on their event loops and fire.
    static func shared() async throws -> TLSTestCertificates {
        try SystemRequirements.tool("openssl", for: "the TLS tests' certificates")
        return try await making.value
    }

    private static let making = Task { try await onThread { try TLSTestCertificates() } }

    let directory: String

    private init() throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent(
                "tether-sockets-tls-\(UUID().uuidString)"
            ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Self.shell(Self.script, in: directory)
    }

    /// The PEM path of `name` (`ca`, `server`, `expired`, `other`, `selfsigned`, `client`).
    func certificatePath(_ name: String) -> String { "\(directory)/\(name).pem" }
    /// The key path of `name`.
    func keyPath(_ name: String) -> String { "\(directory)/\(name).key" }

    func certificate(_ name: String) throws -> NIOSSLCertificate {
        try NIOSSLCertificate.fromPEMFile(certificatePath(name))[0]
    }

    func key(_ name: String) throws -> NIOSSLPrivateKey {
        try NIOSSLPrivateKey(file: keyPath(name), format: .pem)
    }

    /// Server settings presenting `name`.
    func server(_ name: String = "server") throws -> TLSSettings {
        .server(certificateChain: [try certificate(name)], privateKey: try key(name))
    }

    /// Client settings trusting only the test CA.
    func client(peerName: String? = nil) throws -> TLSSettings {
        var settings = TLSSettings.client(peerName: peerName)
        settings.trustRoots = .certificates([try certificate("ca")])
        return settings
    }

    /// The SHA-256 of `name`'s SubjectPublicKeyInfo, computed by the openssl CLI (not by the code under test).
    func spkiHash(_ name: String) async throws -> [UInt8] {
        let directory = directory
        let output = try await onThread {
            try Self.shell(
                "openssl x509 -in \(name).pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -hex",
                in: directory
            )
        }
        let hex = String(output.split(separator: "=").last ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    @discardableResult
    static func shell(_ script: String, in directory: String) throws -> String {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-e", "-c", script]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw POSIXError(.EIO) }
        return String(decoding: data, as: UTF8.self)
    }

    private static let script = """
        cat > ca.cnf <<'EOF'
        [ ca ]
        default_ca = test_ca
        [ test_ca ]
        dir = .
        database = index.txt
        new_certs_dir = .
        serial = serial
        default_md = sha256
        policy = any
        copy_extensions = copy
        unique_subject = no
        [ any ]
        commonName = supplied
        EOF
        touch index.txt
        echo 1000 > serial
        openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 3 -subj "/CN=Tether Sockets Test CA" \
          -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
        sign() { # name subject san extendedKeyUsage [startdate enddate]
          openssl req -newkey rsa:2048 -nodes -keyout $1.key -out $1.csr -subj "$2" 2>/dev/null
          printf "basicConstraints=CA:FALSE\\nextendedKeyUsage=$4\\n" > $1.ext
          if [ -n "$3" ]; then printf "subjectAltName=$3\\n" >> $1.ext; fi
          if [ -n "$5" ]; then
            openssl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in $1.csr -out $1.pem -notext \
              -extfile $1.ext -startdate $5 -enddate $6 2>/dev/null
          else
            openssl x509 -req -in $1.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out $1.pem -days 3 \
              -extfile $1.ext 2>/dev/null
          fi
        }
        sign server "/CN=localhost" "DNS:localhost,IP:127.0.0.1,IP:::1" serverAuth
        sign expired "/CN=localhost" "DNS:localhost,IP:127.0.0.1,IP:::1" serverAuth 20200101000000Z 20200102000000Z
        sign other "/CN=other.example" "DNS:other.example" serverAuth
        sign client "/CN=tether-client" "" clientAuth
        openssl req -x509 -newkey rsa:2048 -nodes -keyout selfsigned.key -out selfsigned.pem -days 3 \
          -subj "/CN=localhost" -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null
        """
}

/// A child process (a Python `ssl` peer, `openssl s_server`/`s_client`) whose stdout lines the test can await.
final class PeerProcess: @unchecked Sendable {
    private let process = ChildProcess()
    private let stdin = Pipe()
    private let lock = NIOLock()
    private var lines: [String] = []
    private var finished = false
    private let condition = NSCondition()

    /// Starts `arguments[0]` (looked up on PATH) with the rest as arguments.
    init(_ arguments: [String]) throws {
        try SystemRequirements.tool(arguments[0], for: "a TLS peer")
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = stdin
        try process.run()
        let handle = output.fileHandleForReading
        Thread.detachNewThread { [self] in
            var pending = Data()
            while true {
                let chunk = handle.nextChunk()
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    condition.lock()
                    lines.append(line.trimmingCharacters(in: .whitespacesAndNewlines))
                    condition.broadcast()
                    condition.unlock()
                }
            }
            condition.lock()
            finished = true
            condition.broadcast()
            condition.unlock()
        }
    }

    /// A Python `ssl` peer (Tests/Tools/tls_peer.py).
    static func python(_ arguments: [String]) throws -> PeerProcess {
        try PeerProcess(["python3", "-u", pythonPeerPath] + arguments)
    }

    /// A Python `ssl` server presenting the test certificate `certificate` (`TLSTestCertificates`), with more
    /// arguments of `tls_peer.py` (`--accept N`, `--mode …`, `--starttls`, …).
    static func pythonServer(certificate: String = "server", _ extra: [String] = []) async throws -> PeerProcess {
        let certificates = try await TLSTestCertificates.shared()
        return try python(
            ["server", "--cert", certificates.certificatePath(certificate), "--key", certificates.keyPath(certificate)]
                + extra
        )
    }

    static let pythonPeerPath: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tools/tls_peer.py").path

    /// Every line printed so far.
    var output: [String] {
        condition.lock()
        defer { condition.unlock() }
        return lines
    }

    /// Waits (off the cooperative pool) for a line starting with one of `prefixes`; nil when the process ended or
    /// `timeout` passed.
    func line(startingWith prefixes: String..., timeout: TimeInterval = 20) async throws -> String? {
        try await onThread { [self] in
            let deadline = Date().addingTimeInterval(timeout)
            condition.lock()
            defer { condition.unlock() }
            let match = { (line: String) in prefixes.contains { line.hasPrefix($0) } }
            while true {
                if let line = lines.first(where: match) { return line }
                if finished || !condition.wait(until: deadline) { return lines.first(where: match) }
            }
        }
    }

    /// The port a server peer printed (`PORT n` for Python, `ACCEPT [::]:n` for openssl).
    func port() async throws -> Int {
        guard let line = try await line(startingWith: "PORT ", "ACCEPT"),
            let port = Int(line.split(whereSeparator: { $0 == " " || $0 == ":" }).last ?? "")
        else { throw POSIXError(.EIO) }
        return port
    }

    /// Writes to the process's stdin.
    func send(_ text: String) {
        stdin.fileHandleForWriting.write(Data(text.utf8))
    }

    /// Kills the process (SIGKILL: some peers ignore SIGTERM while blocked). Its reaper thread collects it; not
    /// waiting here keeps the caller's thread of the cooperative pool free.
    func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    }
}
