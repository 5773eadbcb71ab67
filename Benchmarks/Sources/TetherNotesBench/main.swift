import Foundation

// tether-notes-bench: the notes service's operations per second (SQLite, PostgreSQL with one and two servers; 1, 10
// and 100 clients) beside the same calls straight on the stores, `list` apart, and the push latency from a change
// to a watcher. Loopback only; starts its own PostgreSQL. See NotesBenchOptions.usage and BENCHMARKS.md.
signal(SIGPIPE, SIG_IGN)
if CommandLine.arguments.dropFirst().first == "soak" {
    guard let options = NotesSoakOptions(arguments: Array(CommandLine.arguments.dropFirst(2))) else {
        print(NotesSoakOptions.usage)
        exit(CommandLine.arguments.contains("--help") ? 0 : 2)
    }
    print("tether-notes-bench soak: load average \(loadAverage()); \(ISO8601DateFormatter().string(from: Date()))")
    let passed: Bool
    do {
        passed = try await NotesSoak.run(options)
    } catch {
        print("failed: \(error)")
        exit(1)
    }
    print("load average at the end: \(loadAverage())")
    exit(passed ? 0 : 1)
}
guard let options = NotesBenchOptions(arguments: Array(CommandLine.arguments.dropFirst())) else {
    print(NotesBenchOptions.usage)
    exit(CommandLine.arguments.contains("--help") ? 0 : 2)
}
print(
    "tether-notes-bench: \(ProcessInfo.processInfo.activeProcessorCount) cores; load average \(loadAverage()); "
        + "\(ISO8601DateFormatter().string(from: Date())); \(CommandLine.arguments.dropFirst().joined(separator: " "))"
)
var postgres: ThrowawayPostgres?
var interruptions: [any DispatchSourceSignal] = []
if options.targets.contains(where: \.usesPostgres) {
    let server = try ThrowawayPostgres.start(fsync: !options.noFsync)
    postgres = server
    // Interrupted (^C, kill): stop the server and remove its directory before leaving.
    for number in [SIGINT, SIGTERM, SIGHUP] {
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler {
            print("signal \(number): stopping PostgreSQL")
            server.stop()
            exit(128 + number)
        }
        source.resume()
        interruptions.append(source)
    }
    print(
        "PostgreSQL on 127.0.0.1:\(server.port) in \(server.directory.path), fsync "
            + (options.noFsync ? "off" : "on") + ", postmaster \(server.postmasterPID.map(String.init) ?? "?")"
    )
}
let report: NotesReport
do {
    report = try await NotesBench.measure(options.targets, options: options, postgres: postgres)
} catch {
    print("failed: \(error)")
    postgres?.stop()
    exit(1)
}
postgres?.stop()
for source in interruptions { source.cancel() }
print("\nload average at the end: \(loadAverage())")
for line in report.lines() { print(line) }

/// The first three fields of `/proc/loadavg`.
func loadAverage() -> String {
    let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?"
    return text.split(separator: " ").prefix(3).joined(separator: " ")
}

/// Writes a line to standard output at once (unbuffered, so that a piped run shows progress).
func print(_ line: String = "") {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
