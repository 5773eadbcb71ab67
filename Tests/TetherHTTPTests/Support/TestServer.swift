import Foundation
import NIOCore
import NIOPosix
import TetherHTTP
import TetherTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A Python HTTP server (stdlib `ThreadingHTTPServer`, HTTP/1.1 keep-alive, TCP_NODELAY) in a subprocess on
/// 127.0.0.1, optionally behind TLS. It exits when the test process closes its stdin (also when we crash).
final class TestServer: @unchecked Sendable {
    let port: Int
    let scheme: String
    private let process: ChildProcess
    private let stdin: Pipe

    static let http: TestServer = try! TestServer(certificate: nil)
    static let https: TestServer = try! TestServer(certificate: TestCertificates.shared)

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
    let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .bind(host: "127.0.0.1", port: 0).wait()
    let port = channel.localAddress!.port!
    try channel.close().wait()
    return port
}
