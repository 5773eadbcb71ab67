import Foundation

// tether-stress: the load and soak tool of the reliability issue (RELIABILITY.md, "Load and soak").
// Loopback only. See StressOptions.usage.
signal(SIGPIPE, SIG_IGN)
let options = StressOptions(arguments: Array(CommandLine.arguments.dropFirst()))

if options.command.hasPrefix("serve-") {
    try await PeerCommand.run(options)
}

let limit = ProcessProbe.raiseDescriptorLimit()
print(
    "tether-stress \(options.command): RLIMIT_NOFILE soft \(limit.before) → \(limit.after) (hard \(limit.hard)); "
        + "\(ProcessInfo.processInfo.activeProcessorCount) cores; load average \(ProcessProbe.loadAverage()); "
        + "\(ISO8601DateFormatter().string(from: Date()))"
)
let passed: Bool
switch options.command {
case "tcp": passed = try await TCPScenario.run(options, tls: false)
case "tls": passed = try await TCPScenario.run(options, tls: true)
case "udp": passed = try await UDPScenario.run(options)
case "http": passed = try await HTTPScenario.run(options)
case "soak": passed = try await SoakScenario.run(options)
default:
    print(StressOptions.usage)
    exit(options.command == "help" ? 0 : 2)
}
if ProcessInfo.processInfo.environment["TETHER_STRESS_FDS"] != nil {
    for (kind, count) in ProcessProbe.descriptorTargets().sorted(by: { $0.key < $1.key }) {
        print("  fd: \(count) × \(kind)")
    }
}
print("\nresult: \(passed ? "PASS" : "FAIL")")
exit(passed ? 0 : 1)

/// Writes a line to standard output at once (unbuffered, so that a piped run shows progress and a killed run keeps
/// what it printed).
func print(_ line: String = "") {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
