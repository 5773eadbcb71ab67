/// The command line of `tether-notes-bench`: `[--name value …]`, each with a default.
struct NotesBenchOptions: Sendable {
    /// Seconds each throughput cell runs (per variant and round).
    var duration: Double = 5
    /// Rounds of every throughput cell, interleaved; medians are over rounds.
    var rounds = 3
    /// The client counts of the throughput cells.
    var clients = [1, 10, 100]
    /// The deployments measured, in order (names of ``NotesDeployment/Kind``).
    var targets: [NotesDeployment.Kind] = NotesDeployment.Kind.allCases
    /// Changes timed per push-latency run (after ``pushWarmup`` untimed ones).
    var changes = 2_000
    /// Changes sent before the timed ones of a push-latency run.
    var pushWarmup = 100
    /// Notes in the table for the separate `list` measurement.
    var listSize = 1_000
    /// Whether commits skip `fsync`: PostgreSQL with `fsync=off`, SQLite with `synchronous = OFF` (default: both
    /// durable, as the stores ship: PostgreSQL's defaults, `SQLiteStore`'s `synchronous = FULL`).
    var noFsync = false
    /// Which throughput variants run: `server` (through the notes servers), `accounts` (through servers with accounts
    /// on the same stores, every client logged in with a token), `direct` (straight on the stores).
    var variants: Set<String> = ["server", "accounts", "direct"]
    /// Whether only the throughput rounds run (no `list`, no push latency): for profiling one variant.
    var throughputOnly = false

    static let usage = """
        usage: tether-notes-bench [--duration 5] [--rounds 3] [--clients 1,10,100]
                                  [--targets sqlite-1,postgres-1,postgres-1-local,postgres-2]
                                  [--changes 2000] [--push-warmup 100] [--list-size 1000] [--no-fsync]
                                  [--variants server,accounts,direct] [--throughput-only]
        Starts its own PostgreSQL (initdb in a temporary directory, 127.0.0.1 only, removed at the end) and SQLite file;
        runs NotesServer in this process on loopback; RemoteNoteStore clients. Figures: BENCHMARKS.md, "Notes service".
        """

    /// Reads `arguments` (without the program's name); `nil` when they ask for help or are not understood.
    init?(arguments: [String]) {
        var values: [String: String] = [:]
        var index = 0
        while index < arguments.count {
            let name = arguments[index]
            guard name.hasPrefix("--"), name != "--help" else { return nil }
            if index + 1 < arguments.count, !arguments[index + 1].hasPrefix("--") {
                values[name] = arguments[index + 1]
                index += 2
            } else {
                values[name] = ""
                index += 1
            }
        }
        let known: Set = [
            "--duration", "--rounds", "--clients", "--targets", "--changes", "--push-warmup", "--list-size",
            "--no-fsync", "--variants", "--throughput-only",
        ]
        guard Set(values.keys).isSubset(of: known) else { return nil }
        duration = values["--duration"].flatMap(Double.init) ?? duration
        rounds = values["--rounds"].flatMap(Int.init) ?? rounds
        changes = values["--changes"].flatMap(Int.init) ?? changes
        pushWarmup = values["--push-warmup"].flatMap(Int.init) ?? pushWarmup
        listSize = values["--list-size"].flatMap(Int.init) ?? listSize
        noFsync = values["--no-fsync"] != nil
        throughputOnly = values["--throughput-only"] != nil
        if let list = values["--variants"] {
            variants = Set(list.split(separator: ",").map(String.init))
            guard !variants.isEmpty, variants.isSubset(of: ["server", "accounts", "direct"]) else { return nil }
        }
        if let list = values["--clients"] {
            clients = list.split(separator: ",").compactMap { Int($0) }
            guard !clients.isEmpty else { return nil }
        }
        if let list = values["--targets"] {
            let names = list.split(separator: ",").map(String.init)
            targets = names.compactMap(NotesDeployment.Kind.init(rawValue:))
            guard !targets.isEmpty, targets.count == names.count else { return nil }
        }
    }
}
