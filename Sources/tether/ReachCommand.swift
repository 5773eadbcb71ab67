import ArgumentParser
import Dispatch
import Foundation
import NIOCore
import TetherReachability

/// `tether reach`: the reachability status and egress interface, at start and on each change.
struct ReachCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reach",
        abstract: "Print the reachability status and interface at start and on each change."
    )

    @Option(help: "Evaluate reachability of this host name (resolved at start and after each network change).")
    var domain: String?

    @Option(help: "Evaluate reachability of this IPv4 or IPv6 address.")
    var address: String?

    @Flag(help: "Print the first evaluation and exit: 0 when reachable, 1 when not reachable or unknown.")
    var once = false

    @Flag(help: "Print each line as a JSON object with status, interface and interfaceType.")
    var json = false

    @OptionGroup var common: CommonOptions

    func validate() throws {
        if domain != nil && address != nil {
            throw ValidationError("--domain and --address exclude each other.")
        }
        if let domain, domain.isEmpty {
            throw ValidationError("--domain needs a host name.")
        }
        if let address, (try? SocketAddress(ipAddress: address, port: 0)) == nil {
            throw ValidationError("--address needs an IPv4 or IPv6 address, not '\(address)'.")
        }
    }

    func run() async throws {
        let manager = makeManager()
        if once {
            manager.startMonitoring()
            let path = manager.path
            manager.stopMonitoring()
            Terminal.line(Self.format(path, json: json))
            if let error = manager.lastError, path.status == .unknown {
                Terminal.error("error: \(error)")
            }
            if !manager.isReachable { throw ExitCode.failure }
            return
        }
        Terminal.exitOnSignals()
        manager.startMonitoring()
        if let error = manager.lastError {
            Terminal.error("error: \(error) (retrying every 5 s)")
        }
        for await status in manager.statusUpdates {
            var path = manager.path
            path.status = status
            Terminal.line(Self.format(path, json: json))
        }
    }

    private func makeManager() -> NetworkReachabilityManager {
        // The main queue does not run while this task awaits: deliver on a queue of our own.
        let queue = DispatchQueue(label: "tether.reach.callbacks")
        if let domain {
            return NetworkReachabilityManager(domain: domain, callbackQueue: queue)
        }
        if let address, let socketAddress = try? SocketAddress(ipAddress: address, port: 0) {
            return NetworkReachabilityManager(address: socketAddress, callbackQueue: queue)
        }
        return NetworkReachabilityManager(callbackQueue: queue)
    }

    /// One output line: `Reachable via Ethernet (eth0, wiredEthernet)`, or the JSON object of `tether reach --json`.
    static func format(_ path: NetworkPath, json: Bool) -> String {
        guard json else {
            guard let name = path.interfaceName else { return path.status.localizedDescription }
            return "\(path.status.localizedDescription) (\(name), \(path.interfaceType?.rawValue ?? "other"))"
        }
        return "{\"status\": \(jsonString(path.status.localizedDescription)), "
            + "\"interface\": \(path.interfaceName.map(jsonString) ?? "null"), "
            + "\"interfaceType\": \(path.interfaceType.map { jsonString($0.rawValue) } ?? "null")}"
    }

    private static func jsonString(_ text: String) -> String {
        let data = try? JSONSerialization.data(withJSONObject: text, options: [.fragmentsAllowed])
        return data.map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
    }
}

/// The demo's reachability step: a one-line summary of the current path ("any route" manager).
/// - Returns: e.g. `reachability: Reachable via Ethernet (eth0, wiredEthernet)`.
/// - Throws: the back-end's error when it could not evaluate at all.
func runReachabilityDemoStep() async throws -> String {
    let manager = NetworkReachabilityManager(callbackQueue: DispatchQueue(label: "tether.demo.reachability"))
    manager.startMonitoring()
    let path = manager.path
    manager.stopMonitoring()
    if path.status == .unknown, let error = manager.lastError {
        throw error
    }
    return "reachability: " + ReachCommand.format(path, json: false)
}
