import ArgumentParser
import Dispatch
import Foundation
import NIOCore
import TetherReachability

/// `tether reach`: the reachability status, egress interface and its kind, at start and on each change.
struct ReachCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reach",
        abstract: "Print the reachability status and interface at start and on each change.",
        discussion: """
            Each line is the status (AFNetworking's words), then the egress interface and its kind: wifi, cellular, \
            wiredEthernet, loopback, vpn (WireGuard, tun, IPsec), tunnel (GRE, IP-in-IP, VXLAN) or other. For a \
            host, the line ends with the route that serves it, as `ip route get` finds it (policy rules included).
            """
    )

    @Option(
        help: ArgumentHelp(
            "Evaluate reachability of this host: a name (resolved at start and after each change) or an IP address.",
            valueName: "host"
        )
    )
    var host: String?

    @Option(help: "Evaluate reachability of this host name (resolved at start and after each network change).")
    var domain: String?

    @Option(help: "Evaluate reachability of this IPv4 or IPv6 address.")
    var address: String?

    @Flag(help: "Print the first evaluation and exit: 0 when reachable, 1 when not reachable or unknown.")
    var once = false

    @Flag(help: "Print each line as a JSON object with status, interface, interfaceType, kind, driver, and more.")
    var json = false

    @Option(
        help: ArgumentHelp(
            "Wait up to this many seconds for a route, print the path and exit: 0 when reachable, 1 on timeout.",
            valueName: "seconds"
        )
    )
    var wait: Double?

    @OptionGroup var common: CommonOptions

    func validate() throws {
        if [host, domain, address].compactMap({ $0 }).count > 1 {
            throw ValidationError("--host, --domain and --address exclude each other.")
        }
        if let domain, domain.isEmpty {
            throw ValidationError("--domain needs a host name.")
        }
        if let host, host.isEmpty {
            throw ValidationError("--host needs a host name or an IP address.")
        }
        if let wait, !(wait >= 0 && wait <= 86_400) {
            throw ValidationError("--wait needs a number of seconds from 0 to 86400, not \(wait).")
        }
        if wait != nil && once {
            throw ValidationError("--wait and --once exclude each other.")
        }
        if let address, (try? SocketAddress(ipAddress: address, port: 0)) == nil {
            throw ValidationError("--address needs an IPv4 or IPv6 address, not '\(address)'.")
        }
    }

    func run() async throws {
        let manager = makeManager()
        if let wait {
            do {
                let path = try await manager.waitForConnectivity(timeout: .milliseconds(Int((wait * 1000).rounded())))
                Terminal.line(format(path))
                return
            } catch let error as NetworkReachabilityError where error.code == .connectivityTimedOut {
                Terminal.line(format(manager.path))
                let target = host ?? domain ?? address ?? "any destination"
                let cause = error.underlying.map { " (\($0))" } ?? ""
                Terminal.error("error: no route to \(target) within \(wait) s\(cause)")
                throw ExitCode.failure
            }
        }
        if once {
            manager.startMonitoring()
            let path = manager.path
            manager.stopMonitoring()
            Terminal.line(format(path))
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
            Terminal.line(format(path))
        }
    }

    private func makeManager() -> NetworkReachabilityManager {
        // The main queue does not run while this task awaits: deliver on a queue of our own.
        let queue = DispatchQueue(label: "tether.reach.callbacks")
        if let host {
            if let address = try? SocketAddress(ipAddress: host, port: 0) {
                return NetworkReachabilityManager(address: address, callbackQueue: queue)
            }
            return NetworkReachabilityManager(domain: host, callbackQueue: queue)
        }
        if let domain {
            return NetworkReachabilityManager(domain: domain, callbackQueue: queue)
        }
        if let address, let socketAddress = try? SocketAddress(ipAddress: address, port: 0) {
            return NetworkReachabilityManager(address: socketAddress, callbackQueue: queue)
        }
        return NetworkReachabilityManager(callbackQueue: queue)
    }

    /// Whether a target was named: lines then show the route that serves it.
    private var isPerHost: Bool { host != nil || domain != nil || address != nil }

    private func format(_ path: NetworkPath) -> String {
        Self.format(path, json: json, showsRoute: isPerHost)
    }

    /// One output line: `Reachable via Ethernet (eth0, wiredEthernet)`, `Reachable via WiFi (wg0, vpn, wireguard)`
    /// (the driver of a VPN or tunnel), `…, expensive)` for a cellular path, then ` route <route>` when `showsRoute`;
    /// or the JSON object of `tether reach --json`.
    static func format(_ path: NetworkPath, json: Bool, showsRoute: Bool = false) -> String {
        guard json else {
            guard let name = path.interfaceName else { return path.status.localizedDescription }
            let kind = path.interfaceKind ?? path.interfaceType.map(NetworkPath.InterfaceKind.init) ?? .other
            var details = [name, kind.rawValue]
            if kind == .vpn || kind == .tunnel, let driver = path.interfaceDriver { details.append(driver) }
            if path.isExpensive { details.append("expensive") }
            if path.isConstrained { details.append("constrained") }
            let route = showsRoute ? path.route.map { " route \($0)" } ?? "" : ""
            return "\(path.status.localizedDescription) (\(details.joined(separator: ", ")))\(route)"
        }
        return "{\"status\": \(jsonString(path.status.localizedDescription)), "
            + "\"interface\": \(path.interfaceName.map(jsonString) ?? "null"), "
            + "\"interfaceType\": \(path.interfaceType.map { jsonString($0.rawValue) } ?? "null"), "
            + "\"kind\": \(path.interfaceKind.map { jsonString($0.rawValue) } ?? "null"), "
            + "\"driver\": \(path.interfaceDriver.map(jsonString) ?? "null"), "
            + "\"isExpensive\": \(path.isExpensive), \"isConstrained\": \(path.isConstrained), "
            + "\"route\": \(path.route.map { jsonString($0.description) } ?? "null")}"
    }

    private static func jsonString(_ text: String) -> String {
        let data = try? JSONSerialization.data(withJSONObject: text, options: [.fragmentsAllowed])
        return data.map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
    }
}

/// The demo's reachability step: the current path ("any route" manager) with its kind and serving route, then
/// `waitForConnectivity(to:timeout:)` for this host's own loopback address (per-host evaluation; no traffic).
/// - Returns: e.g. `reachability: Reachable via Ethernet (eth0, wiredEthernet) route default via 10.0.0.1 table 254
///   metric 100 rule 32766; 127.0.0.1: Reachable via WiFi (lo, loopback)`.
/// - Throws: the back-end's error when it could not evaluate at all; the wait's error when loopback is unreachable.
func runReachabilityDemoStep() async throws -> String {
    let manager = NetworkReachabilityManager(callbackQueue: DispatchQueue(label: "tether.demo.reachability"))
    manager.startMonitoring()
    let path = manager.path
    manager.stopMonitoring()
    if path.status == .unknown, let error = manager.lastError {
        throw error
    }
    let loopback = try await NetworkReachabilityManager.waitForConnectivity(to: "127.0.0.1", timeout: .seconds(5))
    return "reachability: " + ReachCommand.format(path, json: false, showsRoute: true) + "; 127.0.0.1: "
        + ReachCommand.format(loopback, json: false)
}
