import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A running example program (or any command): a child process whose standard output and error are collected line
/// by line on threads of their own, so that a test can wait for a line, or for the end, with a timeout.
///
/// Started with `posix_spawn`, not Foundation's `Process`: on Linux, `Process.run()` now and then crashes (an
/// over-read in `findMaximumOpenFromProcSelfFD()`, swift-corelibs-foundation PR #5472); this closes every descriptor
/// above 2 in the child with `posix_spawn_file_actions_addclosefrom_np` instead. Standard input is `/dev/null`.
final class Example: Sendable, CustomStringConvertible {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let description: String
    let output: LineReader
    let errors: LineReader
    private let pid: pid_t
    private let end = ExitRecord()

    /// Starts the example `name` (an executable of this package) with `arguments`.
    convenience init(_ name: String, _ arguments: [String]) throws {
        try self.init(executable: try Self.path(of: name), arguments, name: name)
    }

    /// Starts `executable` with `arguments`; `name` is how failures call it.
    init(executable: String, _ arguments: [String], name: String? = nil) throws {
        self.description = ([name ?? executable] + arguments).joined(separator: " ")
        let stdout = Pipe()
        let stderr = Pipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout.fileHandleForWriting.fileDescriptor, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr.fileHandleForWriting.fileDescriptor, 2)
        guard let closeFrom = Self.addCloseFrom, closeFrom(&actions, 3) == 0 else { throw POSIXError(.ENOSYS) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let environment = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in environment { free(pointer) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, nil, argv, environment)
        // The child holds its ends now; the parent's copies would keep the readers from ever seeing the end.
        try? stdout.fileHandleForWriting.close()
        try? stderr.fileHandleForWriting.close()
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
        let spawned = child
        self.pid = spawned
        self.output = LineReader(stdout.fileHandleForReading)
        self.errors = LineReader(stderr.fileHandleForReading)
        // The reaper holds the record, not `self`: an example dropped while running is killed by `deinit`.
        let end = self.end
        Thread.detachNewThread {
            var raw: Int32 = 0
            while waitpid(spawned, &raw, 0) == -1 && errno == EINTR {}
            end.record(raw)
        }
    }

    deinit {
        stop()
    }

    /// The process id (for `nsenter --target`).
    var processIdentifier: pid_t { pid }

    /// Consumes standard output up to the next line that satisfies `predicate`, and returns it.
    @discardableResult
    func line(
        _ what: String,
        timeout: TimeInterval = 10,
        where predicate: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        let output = self.output
        return try await offPool { try output.next(what, timeout: timeout, where: predicate) }
    }

    /// Waits for the process to end and returns its exit status; a signal's end or the timeout fails.
    func exitStatus(timeout: TimeInterval = 20) async throws -> Int32 {
        let end = self.end
        guard let raw = try await offPool({ end.wait(timeout: timeout) }) else {
            throw Failure(
                description: "\(description) did not end within \(timeout) s; stdout: \(output.snapshot), "
                    + "stderr: \(errors.snapshot)"
            )
        }
        guard raw & 0x7F == 0 else { throw Failure(description: "\(description) ended by signal \(raw & 0x7F)") }
        return (raw >> 8) & 0xFF
    }

    /// Waits for the end and returns the status with every line printed on standard output and on standard error.
    func finish(timeout: TimeInterval = 20) async throws -> (status: Int32, stdout: [String], stderr: [String]) {
        let status = try await exitStatus(timeout: timeout)
        let (output, errors) = (self.output, self.errors)
        let lines = try await offPool { (try output.all(timeout: timeout), try errors.all(timeout: timeout)) }
        return (status, lines.0, lines.1)
    }

    /// Sends SIGKILL unless the process already ended.
    func stop() {
        end.unlessEnded { _ = kill(pid, SIGKILL) }
    }

    // glibc ≥ 2.34; the Glibc module does not declare it.
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addCloseFrom: CloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast($0, to: CloseFrom.self)
    }

    /// The built example `name`: in `$EXAMPLES_BIN_DIR`, else next to the test runner (`swift build` puts both in
    /// `.build/debug`).
    static func path(of name: String) throws -> String {
        var folders: [URL] = []
        if let folder = ProcessInfo.processInfo.environment["EXAMPLES_BIN_DIR"] {
            folders.append(URL(fileURLWithPath: folder))
        }
        // The runner may sit inside a bundle folder (`….xctest/Contents/MacOS`): look up a few levels.
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        for _ in 0..<4 {
            folders.append(folder)
            folder.deleteLastPathComponent()
        }
        for folder in folders {
            let candidate = folder.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw Failure(description: "\(name) is not built: run `swift build` in Examples/ before `swift test`")
    }
}

/// A child's raw wait status, recorded by the thread that waits for it.
// Sendable: `status` is used only while holding `condition`.
final class ExitRecord: @unchecked Sendable {
    private let condition = NSCondition()
    private var status: Int32?

    func record(_ raw: Int32) {
        condition.withLock {
            status = raw
            condition.broadcast()
        }
    }

    /// Blocks until the status is recorded and returns it; nil after `timeout` seconds.
    func wait(timeout: TimeInterval) -> Int32? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        return condition.withLock {
            while status == nil && condition.wait(until: deadline) {}
            return status
        }
    }

    /// Runs `body`, holding the lock, unless the status is recorded.
    func unlessEnded(_ body: () -> Void) {
        condition.withLock {
            if status == nil { body() }
        }
    }
}

/// The lines a child writes to one pipe, read by a thread of their own as they come.
// Sendable: every var is used only while holding `condition`.
final class LineReader: @unchecked Sendable {
    private let condition = NSCondition()
    private var lines: [String] = []
    private var cursor = 0
    private var isClosed = false

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in readLines(handle) }
    }

    /// Blocks until a line after the last one consumed satisfies `predicate`, consuming the lines up to it.
    func next(_ what: String, timeout: TimeInterval, where predicate: (String) -> Bool) throws -> String {
        let deadline = Date(timeIntervalSinceNow: timeout)
        return try condition.withLock {
            while true {
                while cursor < lines.count {
                    cursor += 1
                    if predicate(lines[cursor - 1]) { return lines[cursor - 1] }
                }
                if isClosed {
                    throw Example.Failure(description: "waiting for \(what): the output ended; lines: \(lines)")
                }
                if !condition.wait(until: deadline), cursor == lines.count, !isClosed {
                    throw Example.Failure(
                        description: "waiting for \(what): timed out after \(timeout) s; lines: \(lines)"
                    )
                }
            }
        }
    }

    /// The lines read so far.
    var snapshot: [String] {
        condition.withLock { lines }
    }

    /// Blocks until the pipe's end, and returns every line.
    func all(timeout: TimeInterval) throws -> [String] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        return try condition.withLock {
            while !isClosed {
                if !condition.wait(until: deadline) && !isClosed {
                    throw Example.Failure(description: "the output did not end within \(timeout) s; lines: \(lines)")
                }
            }
            return lines
        }
    }

    private func readLines(_ handle: FileHandle) {
        var pending = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            pending.append(contentsOf: buffer[0..<count])
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending = Data(pending[(newline + 1)...])
                condition.withLock {
                    lines.append(line)
                    condition.broadcast()
                }
            }
        }
        try? handle.close()
        condition.withLock {
            if !pending.isEmpty { lines.append(String(decoding: pending, as: UTF8.self)) }
            isClosed = true
            condition.broadcast()
        }
    }
}

/// Runs blocking work on a thread of its own, off Swift's cooperative pool (two threads here: a test blocking one
/// would halve everyone's progress).
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// A fresh temporary folder; the caller removes it.
func temporaryFolder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tether-examples-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}

/// The port of "listening on 127.0.0.1:PORT".
func listeningPort(_ line: String) throws -> Int {
    let prefix = "listening on 127.0.0.1:"
    return try #require(
        line.hasPrefix(prefix) ? Int(line.dropFirst(prefix.count)) : nil,
        "not a listening line: \(line)"
    )
}
