#if os(Linux)
import Foundation
import TetherTestSupport

/// A `TetherReachProbe` running inside a network namespace of its own (`unshare -rn`: a user and a network
/// namespace, no root needed), with helpers to change that namespace's links and routes (`nsenter`) and to read
/// the probe's JSON lines with a timeout. The namespace lives exactly as long as the probe process.
final class NamespaceProbe {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// One JSON line printed by the probe.
    struct Line: CustomStringConvertible {
        let fields: [String: Any]
        let text: String

        var event: String? { fields["event"] as? String }
        var manager: String? { fields["manager"] as? String }
        var status: String? { fields["status"] as? String }
        var interface: String? { fields["interface"] as? String }
        var interfaceType: String? { fields["interfaceType"] as? String }
        var kind: String? { fields["kind"] as? String }
        var driver: String? { fields["driver"] as? String }
        var route: String? { fields["route"] as? String }
        var description: String { text }
    }

    private let process = ChildProcess()
    private let input = Pipe()
    private let output = Pipe()
    private let errors = Pipe()
    private let condition = NSCondition()
    private var lines: [Line] = []
    private var cursor = 0
    private var isClosed = false

    /// Every line read so far.
    var allLines: [Line] {
        condition.lock()
        defer { condition.unlock() }
        return lines
    }

    /// Starts `unshare -rn sh -c '<setup>; exec probe <arguments>'`.
    /// - Parameters:
    ///   - setup: shell commands run inside the new namespace before the probe starts.
    ///   - arguments: the probe's arguments.
    ///   - mountNamespace: also give the probe a mount namespace of its own (`-m`), so that `setup` can
    ///     bind-mount files (e.g. over `/etc/hosts`) without touching the host.
    init(setup: String, arguments: [String], mountNamespace: Bool = false) throws {
        let probe = try Self.probeExecutable()
        let unshare = try SystemRequirements.tool("unshare", for: "the reachability tests' network namespace")
        try SystemRequirements.tool("ip", for: "the reachability tests' links and routes")
        try SystemRequirements.tool("nsenter", for: "changing the reachability tests' network namespace")
        try SystemRequirements.namespaces(mountNamespace ? "-rnm" : "-rn", for: "the reachability tests' namespace")
        process.executableURL = URL(fileURLWithPath: unshare)
        process.arguments =
            [mountNamespace ? "-rnm" : "-rn", "/bin/sh", "-c", "set -e\n\(setup)\nexec \"$0\" \"$@\"", probe]
            + arguments
        process.environment = Self.environment
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let reader = Thread { [self] in self.readLines() }
        reader.name = "tests.reachability.probe-reader"
        reader.start()
    }

    deinit {
        close()
    }

    /// Runs a shell script inside the probe's namespace and waits for it.
    /// - Throws: `Failure` with the script's stderr when it fails.
    func run(_ script: String) throws {
        let nsenter = ChildProcess()
        nsenter.executableURL = URL(fileURLWithPath: try Self.tool("nsenter"))
        nsenter.arguments = [
            "--target", "\(process.processIdentifier)", "--user", "--net", "--preserve-credentials",
            "/bin/sh", "-c", "set -e\n\(script)",
        ]
        nsenter.environment = Self.environment
        let stderr = Pipe()
        nsenter.standardError = stderr
        nsenter.standardOutput = FileHandle.nullDevice
        try nsenter.run()
        let message = stderr.fileHandleForReading.readDataToEndOfFile()
        nsenter.waitUntilExit()
        guard nsenter.terminationStatus == 0 else {
            throw Failure(
                description: "in-namespace script failed (\(nsenter.terminationStatus)): \(script)\n"
                    + String(decoding: message, as: UTF8.self)
            )
        }
    }

    /// Runs a shell script inside the probe's namespace and returns its standard output and error, whatever its
    /// exit status (for `ip route get`, which fails for an unreachable destination).
    func output(of script: String) throws -> String {
        let nsenter = ChildProcess()
        nsenter.executableURL = URL(fileURLWithPath: try Self.tool("nsenter"))
        nsenter.arguments = [
            "--target", "\(process.processIdentifier)", "--user", "--net", "--preserve-credentials",
            "/bin/sh", "-c", "\(script) 2>&1",
        ]
        nsenter.environment = Self.environment
        let stdout = Pipe()
        nsenter.standardOutput = stdout
        try nsenter.run()
        let text = stdout.fileHandleForReading.readDataToEndOfFile()
        nsenter.waitUntilExit()
        return String(decoding: text, as: UTF8.self)
    }

    /// Runs `ip -batch` inside the probe's namespace over a file holding `commands` (one `ip` command each,
    /// without the leading `ip`).
    func runBatch(_ commands: [String]) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tether-ip-batch-\(UUID().uuidString)")
        try (commands.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        try run("ip -batch '\(file.path)'")
    }

    /// Sends one command line to the probe.
    func send(_ command: String) {
        input.fileHandleForWriting.write(Data((command + "\n").utf8))
    }

    /// Consumes lines until one matches, and returns it.
    /// - Throws: `Failure` naming what was awaited, what was seen and the probe's stderr, on timeout or exit.
    @discardableResult
    func next(
        _ what: String,
        timeout: TimeInterval = 10,
        where predicate: (Line) -> Bool
    ) throws -> Line {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            while cursor < lines.count {
                let line = lines[cursor]
                cursor += 1
                if predicate(line) { return line }
            }
            if isClosed || !condition.wait(until: deadline) {
                if cursor < lines.count { continue }
                let reason = isClosed ? "the probe exited" : "timed out after \(timeout) s"
                let stderr = String(decoding: errorsSoFar(), as: UTF8.self)
                throw Failure(
                    description: "waiting for \(what): \(reason); lines: \(lines.map(\.text)); stderr: \(stderr)"
                )
            }
        }
    }

    /// Lines not consumed yet, consuming them.
    func takeRemaining() -> [Line] {
        condition.lock()
        defer { condition.unlock() }
        let rest = Array(lines[cursor...])
        cursor = lines.count
        return rest
    }

    /// Stops the probe (SIGSTOP): its netlink socket fills while the test changes the namespace.
    func suspend() {
        kill(process.processIdentifier, SIGSTOP)
    }

    /// Lets a suspended probe run again (SIGCONT).
    func resume() {
        kill(process.processIdentifier, SIGCONT)
    }

    /// The kernel's count of messages dropped for the probe's rtnetlink monitor socket (the one subscribed to the
    /// back-end's groups, 0x405D1), from `/proc/<pid>/net/netlink`; `nil` when no such socket is listed.
    func netlinkDrops() throws -> Int? {
        let table = try String(contentsOfFile: "/proc/\(process.processIdentifier)/net/netlink", encoding: .utf8)
        // Columns: sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode.
        let rows = table.split(separator: "\n").dropFirst().map { $0.split(separator: " ") }
        let monitors = rows.filter { $0.count >= 9 && $0[1] == "0" && UInt32($0[3], radix: 16) == 0x405D1 }
        guard !monitors.isEmpty else { return nil }
        return monitors.compactMap { Int($0[8]) }.reduce(0, +)
    }

    /// Ends the probe (stdin EOF, then SIGTERM, then SIGKILL) and with it the namespace.
    func close() {
        guard process.isRunning else { return }
        resume()
        try? input.fileHandleForWriting.close()
        let deadline = Date(timeIntervalSinceNow: 5)
        while process.isRunning, Date() < deadline {
            usleep(10_000)
        }
        if process.isRunning {
            process.terminate()
            usleep(200_000)
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
    }

    private var stderrData = Data()

    private func errorsSoFar() -> Data {
        // Only read stderr once the process ended (reading earlier would block).
        guard !process.isRunning else { return Data() }
        if stderrData.isEmpty {
            stderrData = errors.fileHandleForReading.readDataToEndOfFile()
        }
        return stderrData
    }

    private func readLines() {
        let handle = output.fileHandleForReading
        var pending = Data()
        while true {
            let chunk = handle.nextChunk()
            if chunk.isEmpty { break }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let lineData = pending[pending.startIndex..<newline]
                pending = Data(pending[(newline + 1)...])
                let text = String(decoding: lineData, as: UTF8.self)
                let fields = (try? JSONSerialization.jsonObject(with: Data(lineData))) as? [String: Any] ?? [:]
                condition.lock()
                lines.append(Line(fields: fields, text: text))
                condition.broadcast()
                condition.unlock()
            }
        }
        condition.lock()
        isClosed = true
        condition.broadcast()
        condition.unlock()
    }

    // MARK: Finding the tools

    static let environment: [String: String] = {
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = (environment["PATH"].map { $0 + ":" } ?? "") + "/usr/sbin:/sbin:/usr/bin:/bin"
        return environment
    }()

    /// The full path of a tool (checked by the test before the probe started), or a failure naming it.
    static func tool(_ name: String) throws -> String {
        guard let path = SystemRequirements.path(of: name) else { throw Failure(description: "\(name) not found") }
        return path
    }

    /// `TetherReachProbe`, built next to the test bundle (`swift build --build-tests` builds it), or
    /// `$TETHER_REACH_PROBE`.
    static func probeExecutable() throws -> String {
        if let path = ProcessInfo.processInfo.environment["TETHER_REACH_PROBE"] { return path }
        return try BuiltProduct.require("TetherReachProbe").path
    }
}
// Sendable: its vars are touched only while holding `condition` or on the test's thread; the rest never changes.
extension NamespaceProbe: @unchecked Sendable {}
#endif
