/// The command line of `tether-notes-bench soak`.
struct NotesSoakOptions: Sendable {
    /// Seconds of writing.
    var duration = 600.0
    /// Users, each with their own notes table.
    var users = 4
    /// Writers per user, spread over the two servers.
    var writers = 2
    /// Seconds between database restarts (alternately fast and immediate); 0 for none.
    var restartEvery = 120.0
    /// Seconds between samples of memory and descriptors.
    var interval = 10.0
    /// The seed of the writers' requests.
    var seed: UInt64 = 1
    /// Whether PostgreSQL runs with `fsync=off`.
    var noFsync = false

    static let usage = """
        usage: tether-notes-bench soak [--duration 600] [--users 4] [--writers 2] [--restart-every 120]
                                       [--interval 10] [--seed 1] [--no-fsync]
        Two notes servers with accounts in this process on one PostgreSQL database (started here), each user's notes
        in a table of their own; per user, writers through both servers and a watcher on each server; the database
        restarted every --restart-every seconds, alternately with a fast and an immediate (crash-like) shutdown.
        Checks that no acknowledged change is lost, no user sees another's note, and every watcher ends equal to the
        database; samples memory and descriptors. Exits 1 on any violation. RELIABILITY.md, "Load and soak".
        """

    /// Reads `arguments` (after `soak`); `nil` when they ask for help or are not understood.
    init?(arguments: [String]) {
        var index = 0
        while index < arguments.count {
            let name = arguments[index]
            if name == "--no-fsync" {
                noFsync = true
                index += 1
                continue
            }
            guard index + 1 < arguments.count else { return nil }
            let value = arguments[index + 1]
            switch name {
            case "--duration":
                guard let number = Double(value), number > 0 else { return nil }
                duration = number
            case "--users":
                guard let number = Int(value), number > 0 else { return nil }
                users = number
            case "--writers":
                guard let number = Int(value), number > 0 else { return nil }
                writers = number
            case "--restart-every":
                guard let number = Double(value), number >= 0 else { return nil }
                restartEvery = number
            case "--interval":
                guard let number = Double(value), number > 0 else { return nil }
                interval = number
            case "--seed":
                guard let number = UInt64(value) else { return nil }
                seed = number
            default: return nil
            }
            index += 2
        }
    }
}
