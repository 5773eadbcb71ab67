import Foundation

/// Runs a program to its end with `posix_spawn` and `waitpid`: its output to a file, its input from `/dev/null`, and
/// no other descriptor of this process. (Foundation's `Process.waitUntilExit()` called from the async top level waited
/// forever for an exited `pg_ctl` here: its termination is reported through a run loop the main thread never runs.)
///
/// The soak restarts PostgreSQL from the process under test. NIO's sockets are not close-on-exec, so a `pg_ctl` that
/// inherited them handed the notes connections open at that moment to the new postmaster, which kept them open: a
/// connection the soak then closed never reached its peer's end (no FIN while the postmaster held a copy), and the
/// run hung at its end. Every descriptor above 2 is closed in the child.
enum ToolProcess {
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    /// glibc 2.34's `posix_spawn_file_actions_addclosefrom_np`, which Swift's Glibc module does not declare.
    private static let addCloseFrom: CloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast($0, to: CloseFrom.self)
    }

    /// Runs `command` (an absolute path, then the arguments); returns its exit status (128 + signal when killed).
    static func run(_ command: [String], outputPath: String) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        guard let closeFrom = Self.addCloseFrom, closeFrom(&actions, 3) == 0 else {
            throw BenchError("posix_spawn_file_actions_addclosefrom_np is missing (glibc 2.34 or later is needed)")
        }
        let arguments = command.map { strdup($0) } + [nil]
        defer { for argument in arguments { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, command[0], &actions, nil, arguments, environ)
        guard spawned == 0 else { throw BenchError("cannot start \(command[0]): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw BenchError("waitpid failed: \(errno)") }
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as functions.
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
