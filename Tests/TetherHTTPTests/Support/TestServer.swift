import Foundation
import NIOCore
import NIOPosix
import TetherConcurrency
import TetherHTTP
import TetherTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A Python HTTP server (stdlib `ThreadingHTTPServer`, HTTP/1.1 keep-alive, TCP_NODELAY) in a subprocess on
/// 127.0.0.1, optionally behind TLS. It exits when the test process closes its stdin (also when we crash).
// Sendable: its stored properties never change after `init`; `ChildProcess` and `Pipe` are safe from any thread.
final class TestServer: @unchecked Sendable {
    let port: Int
    let scheme: String
    private let process: ChildProcess
    private let stdin: Pipe

    /// The run's plain server, started on a thread of its own the first time a test asks.
    ///
    /// Not a `static let` started in place: the start waits for Python to print its port, and every task asking
    /// meanwhile would block its thread of the cooperative pool (as many threads as cores) until then, stalling every
    /// other test of the run.
    static func http() async throws -> TestServer {
        try SystemRequirements.tool("python3", for: "the HTTP tests' server")
        return try await plain.value
    }

    /// The run's TLS server (``TestCertificates``), started as ``http()``.
    static func https() async throws -> TestServer {
        try SystemRequirements.tool("python3", for: "the HTTP tests' server")
        try SystemRequirements.tool("openssl", for: "the HTTPS tests' certificates")
        return try await secure.value
    }

    private static let plain = Task { try await offPool { try TestServer(certificate: nil) } }
    private static let secure = Task {
        let certificates = try await TestCertificates.shared()
        return try await offPool { try TestServer(certificate: certificates) }
    }

    private init(certificate: TestCertificates?) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-http-tests")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let script = directory.appendingPathComponent("server-\(UUID().uuidString).py")
        try pythonServerScript.write(to: script, atomically: true, encoding: .utf8)
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        var arguments = ["python3", script.path]
        if let certificate { arguments += [certificate.serverCertificatePath, certificate.serverKeyPath] }
        process.arguments = arguments
        let stdout = Pipe()
        let stdin = Pipe()
        process.standardOutput = stdout
        process.standardInput = stdin
        try process.run()
        var line = Data()
        while true {
            let byte = stdout.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            throw POSIXError(.EIO)
        }
        self.port = port
        self.scheme = certificate == nil ? "http" : "https"
        self.process = process
        self.stdin = stdin
    }

    func url(_ pathAndQuery: String, host: String = "127.0.0.1") -> URL {
        URL(string: "\(self.scheme)://\(host):\(self.port)\(pathAndQuery)")!
    }

    /// The server's request counters (`path:/x`, `200:name`, `304:name`).
    func counts() async throws -> [String: Int] {
        let request = URLRequest(url: self.url("/count"))
        let (data, _) = try await URLConnection.data(for: request, configuration: .uncached)
        return try JSONDecoder().decode([String: Int].self, from: data)
    }
}

/// A port on 127.0.0.1 where nothing listens (bound, then closed).
func closedPort() throws -> Int {
    // The port stays bound (without a listener) for the rest of the run: connecting to it is refused, and no other
    // test's listener or client can take it meanwhile (a port bound and then closed could be reused at once).
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.EMFILE) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
            bind(fd, socketAddress, length) == 0 && getsockname(fd, socketAddress, &length) == 0
        }
    }
    guard bound else {
        close(fd)
        throw POSIXError(.EADDRNOTAVAIL)
    }
    reservedPorts.withLock { $0.append(fd) }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// The descriptors that hold ``closedPort()``'s ports, open until the process exits.
private let reservedPorts = LockedBox<[Int32]>([])
