import Foundation

/// A server in a child process: this executable run again with a `serve-…` subcommand. The child prints
/// `listening on 127.0.0.1:PORT` first; `stop()` writes `stop` to its standard input and reads its last line,
/// `stats key=value …` (its CPU time from getrusage, its counters), then waits for it to exit (SIGKILL after a
/// deadline).
final class StressPeer: @unchecked Sendable {
    let process = Process()
    let port: Int
    private let input = Pipe()
    private let output = Pipe()
    private let reader: LineReader

    init(arguments: [String]) throws {
        // The executable's real path (not /proc/self/exe, which would name the child "exe" in ps and top).
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "/proc/self/exe"
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = output
        process.standardInput = input
        reader = LineReader(handle: output.fileHandleForReading)
        try LaunchThread.shared.launch(process)
        guard let line = reader.nextLine(timeout: 30), line.hasPrefix("listening on 127.0.0.1:"),
            let port = Int(line.dropFirst("listening on 127.0.0.1:".count))
        else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw StressError("peer \(arguments.joined(separator: " ")) did not start listening")
        }
        self.port = port
    }

    var pid: Int32 { process.processIdentifier }

    /// The peer's resident memory now.
    var residentBytes: Int { ProcessProbe.residentBytes(pid: pid) }

    /// Asks the peer to stop; returns its `stats` line as a dictionary (empty when it did not answer in time).
    @discardableResult
    func stop() -> [String: String] {
        input.fileHandleForWriting.write(Data("stop\n".utf8))
        var stats: [String: String] = [:]
        while let line = reader.nextLine(timeout: 15) {
            guard line.hasPrefix("stats ") else { continue }
            for pair in line.dropFirst(6).split(separator: " ") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { stats[String(parts[0])] = String(parts[1]) }
            }
            break
        }
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }
        try? input.fileHandleForWriting.close()
        try? output.fileHandleForReading.close()
        return stats
    }
}
