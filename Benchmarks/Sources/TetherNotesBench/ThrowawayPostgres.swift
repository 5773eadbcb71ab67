import Foundation

/// A PostgreSQL server of the benchmark's own, from Debian's packages (version 15 preferred): `initdb` in a fresh
/// temporary directory, `pg_ctl start` listening on 127.0.0.1 only (and a unix socket in that directory), trust
/// authentication for the user `tether`; ``stop()`` stops it (fast shutdown) and removes the directory.
///
/// As root (initdb and postgres refuse it) both run as the `postgres` system user through `setpriv`, the directory
/// owned by it. Unlike the tests' server, nothing stops it if this process is killed: `pg_ctl -D DIR/data stop`.
final class ThrowawayPostgres: Sendable {
    /// The loopback TCP port.
    let port: Int
    /// The directory holding the data, the log and the unix socket.
    let directory: URL
    private let binaries: URL
    private let fsync: Bool

    private init(port: Int, directory: URL, binaries: URL, fsync: Bool) {
        self.port = port
        self.directory = directory
        self.binaries = binaries
        self.fsync = fsync
    }

    /// `postgres://tether@127.0.0.1:<port>/postgres?sslmode=disable`.
    var url: String { "postgres://tether@127.0.0.1:\(port)/postgres?sslmode=disable" }

    /// The postmaster's process id (the first line of `postmaster.pid`), or `nil` when it is not running.
    var postmasterPID: Int32? {
        let path = directory.appendingPathComponent("data/postmaster.pid").path
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first.flatMap { Int32($0) }
    }

    /// Starts a server; `fsync` off only when asked (the default keeps PostgreSQL's durable commits).
    static func start(fsync: Bool) throws -> ThrowawayPostgres {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [])
            .filter { FileManager.default.isExecutableFile(atPath: "\(root.path)/\($0)/bin/postgres") }
            .sorted { ($0 == "15" ? 1000 : Int($0) ?? 0) > ($1 == "15" ? 1000 : Int($1) ?? 0) }
        guard let version = versions.first else {
            throw BenchError("PostgreSQL is not installed (/usr/lib/postgresql/*/bin/postgres)")
        }
        let binaries = root.appendingPathComponent(version).appendingPathComponent("bin")
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("tether-notes-bench-pg-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if getuid() == 0 {
            guard let user = getpwnam("postgres") else {
                throw BenchError("running as root, and there is no postgres user to run PostgreSQL as")
            }
            chown(directory.path, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        let server = ThrowawayPostgres(
            port: try LoopbackPort.free(),
            directory: directory,
            binaries: binaries,
            fsync: fsync
        )
        do {
            let data = directory.appendingPathComponent("data").path
            try server.run(
                "initdb",
                ["-D", data, "-U", "tether", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"]
            )
            try server.startPostmaster()
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        return server
    }

    /// Starts the postmaster on the data directory and waits until it accepts connections.
    private func startPostmaster() throws {
        let settings = [
            "-p \(port)", "-k \(directory.path)", "-c listen_addresses=127.0.0.1",
            "-c max_connections=300", "-c shared_buffers=128MB", "-c fsync=\(fsync ? "on" : "off")",
        ]
        try run(
            "pg_ctl",
            [
                "-D", directory.appendingPathComponent("data").path,
                "-l", directory.appendingPathComponent("server.log").path, "-w", "-t", "60",
                "-o", settings.joined(separator: " "), "start",
            ]
        )
    }

    /// Restarts the server on the same port and data: a fast shutdown (sessions ended, a clean checkpoint) or an
    /// immediate one (every process killed at once; the start then recovers from the write-ahead log, as after a
    /// crash). Returns once it accepts connections again.
    func restart(immediate: Bool) throws {
        let data = directory.appendingPathComponent("data").path
        try run("pg_ctl", ["-D", data, "-m", immediate ? "immediate" : "fast", "-w", "-t", "60", "stop"])
        try startPostmaster()
    }

    /// Stops the server (fast shutdown, waiting for it) and removes its directory.
    func stop() {
        let data = directory.appendingPathComponent("data").path
        do {
            try run("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "60", "stop"])
        } catch {
            print("pg_ctl stop failed: \(error)")
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs one of PostgreSQL's programs (as the `postgres` user when root) to its end; throws with its output when
    /// it fails.
    private func run(_ tool: String, _ arguments: [String]) throws {
        let program = binaries.appendingPathComponent(tool).path
        let command =
            getuid() == 0
            ? ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--", program]
            : [program]
        let outputPath = FileManager.default.temporaryDirectory
            .appendingPathComponent("tether-notes-bench-\(UUID().uuidString).out").path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let status = try ToolProcess.run(command + arguments, outputPath: outputPath)
        guard status == 0 else {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            throw BenchError("\(tool) failed (\(status)): \(text)")
        }
    }
}
