import Foundation
import NIOCore
import TetherSockets
import TetherTestSupport

#if canImport(Glibc)
import CNIOLinux
import Glibc
#endif

/// A real proxy process on 127.0.0.1 for the proxy tests: microsocks (SOCKS5, optionally with a user), Dante's
/// `danted` (SOCKS5 without authentication, refusing one target port by rule) or tinyproxy (HTTP CONNECT with Basic
/// authentication, allowing one target port). Started on a free port and waited for by connecting to it; killed by
/// ``stop()``.
final class ProxyServer: @unchecked Sendable {
    // Sendable: every member is set in `init` and never changed; ChildProcess is itself Sendable.
    enum Kind: String, CaseIterable, CustomStringConvertible, Sendable {
        case microsocks
        case dante
        case tinyproxy

        var description: String { rawValue }
        var binary: String {
            switch self {
            case .microsocks: "microsocks"
            case .dante: "danted"
            case .tinyproxy: "tinyproxy"
            }
        }
        var package: String {
            switch self {
            case .microsocks: "microsocks"
            case .dante: "dante-server"
            case .tinyproxy: "tinyproxy"
            }
        }
    }

    struct StartFailed: Error, CustomStringConvertible {
        let description: String
    }

    static let user = ProxyCredentials(username: "tether", password: "pr0xy-pass")

    let kind: Kind
    let port: Int
    /// Whether the proxy asks for ``user`` (microsocks and tinyproxy do; Dante's username method reads the system's
    /// accounts, so it runs without authentication).
    let requiresLogin: Bool
    private let process: ChildProcess
    private let directory: URL

    /// Starts a proxy of `kind`.
    /// - Parameters:
    ///   - kind: which proxy.
    ///   - allowedPort: tinyproxy: the one port CONNECT may reach.
    ///   - refusedPort: Dante: a port of 127.0.0.1 that its rules refuse.
    ///   - requiresLogin: microsocks: ask for ``user`` (tinyproxy always does, Dante never).
    static func start(
        _ kind: Kind,
        allowedPort: Int = 0,
        refusedPort: Int = 0,
        requiresLogin: Bool = true
    ) async throws -> ProxyServer {
        let path = try SystemRequirements.tool(kind.binary, for: "a \(kind) proxy (apt-get install \(kind.package))")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-proxy-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let port = try freePort()
        var arguments: [String]
        switch kind {
        case .microsocks:
            arguments = ["-i", "127.0.0.1", "-p", "\(port)"]
            if requiresLogin { arguments += ["-u", user.username, "-P", user.password] }
        case .dante:
            let config = directory.appendingPathComponent("danted.conf")
            try """
            logoutput: stderr
            internal: 127.0.0.1 port = \(port)
            external: 127.0.0.1
            socksmethod: none
            clientmethod: none
            user.unprivileged: nobody
            client pass { from: 127.0.0.0/8 to: 0.0.0.0/0 }
            socks block { from: 0.0.0.0/0 to: 127.0.0.1/32 port = \(refusedPort) }
            socks pass { from: 127.0.0.0/8 to: 0.0.0.0/0 command: connect }

            """.write(to: config, atomically: true, encoding: .utf8)
            arguments = ["-f", config.path, "-N", "1", "-p", directory.appendingPathComponent("pid").path]
        case .tinyproxy:
            let config = directory.appendingPathComponent("tinyproxy.conf")
            try """
            Port \(port)
            Listen 127.0.0.1
            Timeout 60
            LogLevel Critical
            MaxClients 20
            BasicAuth \(user.username) \(user.password)
            ConnectPort \(allowedPort)
            Allow 127.0.0.1

            """.write(to: config, atomically: true, encoding: .utf8)
            arguments = ["-d", "-c", config.path]
        }
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let server = ProxyServer(
            kind: kind,
            port: port,
            requiresLogin: kind == .tinyproxy || (kind == .microsocks && requiresLogin),
            process: process,
            directory: directory
        )
        do {
            try await server.waitUntilAccepting()
        } catch {
            server.stop()
            throw error
        }
        return server
    }

    private init(kind: Kind, port: Int, requiresLogin: Bool, process: ChildProcess, directory: URL) {
        self.kind = kind
        self.port = port
        self.requiresLogin = requiresLogin
        self.process = process
        self.directory = directory
    }

    /// The settings that reach this proxy, with ``user`` when it asks for one (or `credentials` when given).
    func configuration(credentials: ProxyCredentials?? = nil) -> ProxyConfiguration {
        let login = credentials ?? (requiresLogin ? Self.user : nil)
        switch kind {
        case .microsocks, .dante: return .socks5(host: "127.0.0.1", port: port, credentials: login)
        case .tinyproxy: return .httpConnect(host: "127.0.0.1", port: port, credentials: login)
        }
    }

    /// Kills the proxy and removes its files.
    func stop() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Connects until the proxy accepts (a refused connect comes back at once; the pause between attempts only
    /// keeps this loop from taking a core from the proxy that is starting); fails when the process ends first.
    private func waitUntilAccepting() async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            guard process.isRunning else {
                throw StartFailed(description: "\(kind) exited at start (status \(process.terminationStatus))")
            }
            if let peer = try? RawPeer.connect(port: UInt16(port)) {
                peer.close()
                return
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw StartFailed(description: "\(kind) did not accept connections on port \(port)")
    }

    /// A port no socket is bound to now (the kernel's pick for a socket bound to port 0, closed again).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        defer { _ = Glibc.close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
