import ArgumentParser
import TetherSockets

/// `--keepalive IDLE[,INTERVAL,COUNT]` and `--heartbeat SECONDS[,TIMEOUT]`: how `nc` notices a silent peer.
struct LivenessOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "TCP keepalive: seconds idle before the first probe, and optionally seconds between probes and the probes "
                + "that end the connection (the system's values otherwise).",
            valueName: "idle[,interval,count]"
        )
    )
    var keepalive: String?

    @Option(
        help: ArgumentHelp(
            "Send --ping after this many seconds without writing; end with an error when nothing arrives within the "
                + "timeout (default 5) after it.",
            valueName: "seconds[,timeout]"
        )
    )
    var heartbeat: String?

    @Option(help: "The heartbeat's ping, sent as is (a newline by default).")
    var ping = "\n"

    /// The keepalive asked for, or nil.
    func keepaliveSettings() throws -> TCPKeepalive? {
        guard let keepalive else { return nil }
        let parts = keepalive.split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
        guard parts.count == 1 || parts.count == 3, let idle = parts[0], parts.allSatisfy({ $0 != nil }) else {
            throw ValidationError("--keepalive takes IDLE or IDLE,INTERVAL,COUNT (whole numbers).")
        }
        do {
            if parts.count == 1 { return try TCPKeepalive(idle: .seconds(idle)) }
            return try TCPKeepalive(idle: .seconds(idle), interval: .seconds(parts[1]!), count: parts[2]!)
        } catch let error as GCDAsyncSocketError {
            throw ValidationError("--keepalive: \(error.message).")
        }
    }

    /// The heartbeat asked for, or nil.
    func heartbeatSettings() throws -> Heartbeat? {
        guard let heartbeat else { return nil }
        let parts = heartbeat.split(separator: ",", omittingEmptySubsequences: false).map { Double($0) }
        guard (1...2).contains(parts.count), parts.allSatisfy({ $0.map { $0.isFinite && $0 > 0 } == true }) else {
            throw ValidationError("--heartbeat takes SECONDS or SECONDS,TIMEOUT (positive numbers).")
        }
        do {
            return try Heartbeat(
                ping: Array(ping.utf8),
                interval: .seconds(parts[0]!),
                timeout: .seconds(parts.count == 2 ? parts[1]! : 5)
            )
        } catch let error as GCDAsyncSocketError {
            throw ValidationError("--heartbeat: \(error.message).")
        }
    }

    /// Checks the values and the combination.
    func check(udp: Bool) throws {
        guard keepalive != nil || heartbeat != nil else { return }
        if udp { throw ValidationError("--keepalive and --heartbeat are for TCP.") }
        _ = try keepaliveSettings()
        _ = try heartbeatSettings()
    }

    /// Puts the settings in force on a connection.
    func apply(to connection: TCPConnection) async throws {
        if let keepalive = try keepaliveSettings() { try await connection.setKeepalive(keepalive) }
        if let heartbeat = try heartbeatSettings() { try await connection.setHeartbeat(heartbeat) }
    }
}
