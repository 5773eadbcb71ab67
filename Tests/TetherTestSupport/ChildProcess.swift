public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process for tests: the part of Foundation's `Process` API that the tests use, on `posix_spawn`.
///
/// Why not `Process`: on Linux with Swift 6.3.1, `Process.run()` crashes now and then (a 256-byte over-read of a
/// `dirent` in `findMaximumOpenFromProcSelfFD()`, swift-corelibs-foundation PR #5472). It hit this suite once in
/// about ten runs, and the suites open many descriptors, which makes it likelier. This launcher closes every
/// descriptor above 2 in the child with `posix_spawn_file_actions_addclosefrom_np`, without listing `/proc/self/fd`.
// Sendable: pid, status and waiters are used only while holding `lock`; the settings are set before `run()`.
public final class ChildProcess: @unchecked Sendable {
    /// How the process ended.
    public enum TerminationReason: Sendable, Equatable {
        case exit
        case uncaughtSignal
    }

    public var executableURL: URL?
    public var arguments: [String] = []
    /// nil: the parent's environment.
    public var environment: [String: String]?
    public var currentDirectoryURL: URL?
    /// A `Pipe`, a `FileHandle`, or nil (inherit the parent's).
    public var standardInput: Any?
    public var standardOutput: Any?
    public var standardError: Any?

    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias ChangeDirectory =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    // glibc ≥ 2.34 and ≥ 2.29; the Glibc module does not declare them.
    private static let addCloseFrom: CloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast($0, to: CloseFrom.self)
    }
    private static let addChangeDirectory: ChangeDirectory? = dlsym(nil, "posix_spawn_file_actions_addchdir_np")
        .map { unsafeBitCast($0, to: ChangeDirectory.self) }

    private let lock = NSCondition()
    private var pid: pid_t = 0
    private var status: Int32?
    private var waiters: [CheckedContinuation<Void, Never>] = []

    public init() {}

    public var processIdentifier: Int32 { self.lock.withLock { self.pid } }

    public var isRunning: Bool { self.lock.withLock { self.pid != 0 && self.status == nil } }

    /// Starts the process; a reaper thread records its end.
    public func run() throws {
        guard let path = self.executableURL?.path else {
            throw POSIXError(.ENOENT)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentCloses: [FileHandle] = []
        for (target, stream) in [(Int32(0), self.standardInput), (1, self.standardOutput), (2, self.standardError)] {
            switch stream {
            case let pipe as Pipe:
                let childEnd = target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                posix_spawn_file_actions_adddup2(&actions, childEnd.fileDescriptor, target)
                parentCloses.append(childEnd)
            case let handle as FileHandle:
                posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target)
            default:
                break
            }
        }
        guard let closeFrom = Self.addCloseFrom, closeFrom(&actions, 3) == 0 else { throw POSIXError(.ENOSYS) }
        if let directory = self.currentDirectoryURL?.path {
            guard let changeDirectory = Self.addChangeDirectory, changeDirectory(&actions, directory) == 0 else {
                throw POSIXError(.ENOSYS)
            }
        }
        let argv = ([path] + self.arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let environment = self.environment ?? ProcessInfo.processInfo.environment
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, path, &actions, nil, argv, envp)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
        // The child holds its ends now: the parent's copies would keep a reader from ever seeing the end.
        for handle in parentCloses { try? handle.close() }
        let spawned = child
        self.lock.withLock { self.pid = spawned }
        let thread = Thread { [self] in
            var raw: Int32 = 0
            while waitpid(spawned, &raw, 0) == -1 && errno == EINTR {}
            let waiting = self.lock.withLock {
                self.status = raw
                self.lock.broadcast()
                defer { self.waiters = [] }
                return self.waiters
            }
            for waiter in waiting { waiter.resume() }
        }
        thread.start()
    }

    /// Blocks until the process ended. Not on the cooperative pool: tasks use ``exited()``.
    public func waitUntilExit() {
        self.lock.withLock {
            while self.status == nil { self.lock.wait() }
        }
    }

    /// Suspends until the process ended, without holding a thread of the cooperative pool (which has only as
    /// many threads as cores: a test blocking one stalls every other test's tasks).
    public func exited() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = self.lock.withLock {
                if self.status != nil { return true }
                self.waiters.append(continuation)
                return false
            }
            if ended { continuation.resume() }
        }
    }

    /// The exit code, or the number of the signal that ended it.
    public var terminationStatus: Int32 {
        let raw = self.lock.withLock { self.status } ?? 0
        let signal = raw & 0x7F
        return signal == 0 ? (raw >> 8) & 0xFF : signal
    }

    public var terminationReason: TerminationReason {
        let raw = self.lock.withLock { self.status } ?? 0
        return raw & 0x7F == 0 ? .exit : .uncaughtSignal
    }

    /// Sends SIGTERM.
    public func terminate() { self.signal(SIGTERM) }

    /// Sends SIGINT.
    public func interrupt() { self.signal(SIGINT) }

    /// Sends SIGKILL: the process ends at once, with no chance to clean up.
    public func killNow() { self.signal(SIGKILL) }

    private func signal(_ number: Int32) {
        let (pid, running) = self.lock.withLock { (self.pid, self.status == nil) }
        if pid != 0, running { kill(pid, number) }
    }
}
