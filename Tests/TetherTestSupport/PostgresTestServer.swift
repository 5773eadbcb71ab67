public import Foundation
import TetherConcurrency

#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL server for tests, from Debian's packages: `initdb` in a temporary directory, `postgres` listening on
/// 127.0.0.1 on a free port and on a unix socket in that directory, trust authentication for the user `tether`, TLS
/// offered with a self-signed certificate for 127.0.0.1 and localhost (``certificatePath``).
///
/// As root (initdb and postgres refuse it) both run as the `postgres` system user, through `setpriv`, with the
/// directory owned by it. The server is started by a shell that holds the read end of a pipe whose write end only
/// this process has: when this process ends in any way (even SIGKILL) the shell reads end-of-file, stops the server
/// (fast shutdown) and removes the directory. ``stop()`` does the same at once. (The shell cannot `wait` for the
/// server: it inherits a signal mask blocking SIGCHLD from the test process's thread, so it watches for the server's
/// `postmaster.pid` to go instead.)
public final class PostgresTestServer: Sendable {
    /// The loopback TCP port.
    public let port: Int
    /// The directory holding the data, the log and the unix socket `.s.PGSQL.<port>`.
    public let directory: URL
    /// The server's self-signed certificate (PEM), for clients that verify it.
    public var certificatePath: String { directory.appendingPathComponent("server.crt").path }
    private let wrapper: ChildProcess
    private let stopper: LockedBox<FileHandle?>
    private let created = LockedBox<Set<String>>([])

    /// The server every test of this process shares, started on first use.
    public static var shared: PostgresTestServer {
        get async throws { try await sharedStart.value }
    }
    private static let sharedStart = Task { try await PostgresTestServer.start() }

    /// The folder of PostgreSQL's programs (version 15 preferred), or `nil` when PostgreSQL is not installed.
    public static let binaries: URL? = {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [])
            .filter { FileManager.default.isExecutableFile(atPath: "\(root.path)/\($0)/bin/postgres") }
            .sorted { ($0 == "15" ? 1000 : Int($0) ?? 0) > ($1 == "15" ? 1000 : Int($1) ?? 0) }
        return versions.first.map { root.appendingPathComponent($0).appendingPathComponent("bin") }
    }()

    /// Whether PostgreSQL is installed; when it is not, the tests that need it are skipped with
    /// ``unavailableReason``.
    public static var isInstalled: Bool { binaries != nil }

    /// Why the PostgreSQL tests are skipped here.
    public static let unavailableReason =
        "PostgreSQL is not installed (/usr/lib/postgresql/*/bin/postgres): apt-get install postgresql (.ci/run does)"

    private init(port: Int, directory: URL, wrapper: ChildProcess, stopper: FileHandle) {
        self.port = port
        self.directory = directory
        self.wrapper = wrapper
        self.stopper = LockedBox(stopper)
    }

    /// `postgres://tether@127.0.0.1:<port>/<database>?sslmode=disable`.
    public func url(database: String = "postgres") -> String {
        "postgres://tether@127.0.0.1:\(port)/\(database)?sslmode=disable"
    }

    /// The same database through the unix socket in ``directory``.
    public func socketURL(database: String = "postgres") -> String {
        "postgres://tether@/\(database)?host=\(directory.path)&port=\(port)"
    }

    /// Creates the database `name` unless this server already made it.
    public func createDatabase(_ name: String) async throws {
        let isNew = created.withLock { $0.insert(name).inserted }
        guard isNew else { return }
        try await Self.run(
            "createdb",
            ["-h", directory.path, "-p", "\(port)", "-U", "tether", name],
            asPostgres: false
        )
    }

    /// A new, empty database; returns its URL.
    public func makeDatabase() async throws -> String {
        let name = "t" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await createDatabase(name)
        return url(database: name)
    }

    /// Stops the server (fast shutdown) and waits until it and its directory are gone.
    public func stop() async {
        let handle = stopper.withLock { handle -> FileHandle? in
            defer { handle = nil }
            return handle
        }
        try? handle?.close()
        await wrapper.exited()
    }

    /// Starts a server of its own (``shared`` is the one to use unless a test stops it).
    public static func start() async throws -> PostgresTestServer {
        guard let binaries else { throw ServerError(message: unavailableReason) }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("tether-pg-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if getuid() == 0 {
            guard let user = getpwnam("postgres") else {
                throw ServerError(message: "running as root, and there is no postgres user to run PostgreSQL as")
            }
            chown(directory.path, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        let data = directory.appendingPathComponent("data").path
        try await run(
            "initdb",
            ["-D", data, "-U", "tether", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync", "--no-instructions"],
            asPostgres: true
        )
        try await makeCertificate(in: directory)
        let port = try freePort()
        let postgres =
            privileged(binaries.appendingPathComponent("postgres").path) + [
                "-D", data, "-p", "\(port)", "-k", directory.path, "-c", "listen_addresses=127.0.0.1",
                "-c", "max_connections=400", "-c", "fsync=off", "-c", "shared_buffers=64MB",
                "-c", "ssl=on", "-c", "ssl_cert_file=\(directory.path)/server.crt",
                "-c", "ssl_key_file=\(directory.path)/server.key",
            ]
        let script = """
            dir="$1"; shift
            "$@" </dev/null &
            pg=$!
            read -r _ || true
            kill -INT "$pg" 2>/dev/null
            i=0
            while [ -e "$dir/data/postmaster.pid" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
            rm -rf "$dir"
            """
        let wrapper = ChildProcess()
        wrapper.executableURL = URL(fileURLWithPath: "/bin/sh")
        wrapper.arguments = ["-c", script, "postgres-test-server", directory.path] + postgres
        let stdin = Pipe()
        wrapper.standardInput = stdin
        let logPath = directory.appendingPathComponent("server.log").path
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        wrapper.standardOutput = log
        wrapper.standardError = log
        try wrapper.run()
        try? log.close()
        let server = PostgresTestServer(
            port: port,
            directory: directory,
            wrapper: wrapper,
            stopper: stdin.fileHandleForWriting
        )
        // Waits for the event "accepts connections": pg_isready, polled until a deadline.
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            if !wrapper.isRunning {
                throw ServerError(message: "postgres exited: \(Self.text(of: logPath))")
            }
            if (try? await run("pg_isready", ["-h", "127.0.0.1", "-p", "\(port)", "-q"], asPostgres: false)) != nil {
                return server
            }
            guard ContinuousClock.now < deadline else {
                await server.stop()
                throw ServerError(message: "postgres did not accept connections within 60 s")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// A failure to start or drive the server.
    public struct ServerError: Error, CustomStringConvertible {
        /// What went wrong.
        public var message: String
        public var description: String { message }
    }

    /// A self-signed certificate and its key (mode 0600, owned by the server's user, as PostgreSQL requires).
    private static func makeCertificate(in directory: URL) async throws {
        let (certificate, key) = (directory.path + "/server.crt", directory.path + "/server.key")
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout", key, "-out", certificate,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        await process.exited()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw ServerError(message: "openssl could not make the server's certificate")
        }
        chmod(key, 0o600)
        if getuid() == 0, let user = getpwnam("postgres") {
            chown(key, user.pointee.pw_uid, user.pointee.pw_gid)
            chown(certificate, user.pointee.pw_uid, user.pointee.pw_gid)
        }
    }

    /// `setpriv` to the postgres user when running as root, else nothing.
    private static func privileged(_ program: String) -> [String] {
        getuid() == 0
            ? ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--", program]
            : [program]
    }

    /// Runs one of PostgreSQL's programs to its end; throws with its output when it fails.
    private static func run(_ tool: String, _ arguments: [String], asPostgres: Bool) async throws {
        guard let binaries else { throw ServerError(message: unavailableReason) }
        let command =
            asPostgres
            ? privileged(binaries.appendingPathComponent(tool).path)
            : [binaries.appendingPathComponent(tool).path]
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst()) + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: "/")
        // Output to a file, not a pipe: reading a pipe to its end would hold a thread of the cooperative pool.
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("tether-pg-\(UUID()).out").path
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardOutput = output
        process.standardError = output
        try process.run()
        try? output.close()
        await process.exited()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw ServerError(message: "\(tool) failed (\(process.terminationStatus)): \(text(of: outputPath))")
        }
    }

    private static func text(of path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? "(no log)"
    }

    /// A loopback TCP port nobody listens on (the kernel's choice for a socket bound to port 0).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServerError(message: "socket failed: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(fd, address, length) == 0 && getsockname(fd, address, &length) == 0
            }
        }
        guard bound else { throw ServerError(message: "bind failed: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
