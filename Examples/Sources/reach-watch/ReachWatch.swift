// reach-watch: AFNetworking's reachability, `NetworkReachabilityManager`, printing one line per change.
//
//   reach-watch [--domain HOST | --address IP] [--count N]
//
// Prints the current status, then one line each time the status or the egress interface changes:
// "Reachable via Ethernet (eth0, wiredEthernet)", "Not Reachable", … Runs until interrupted, or exits 0 after
// --count lines. Without --domain or --address it watches "any route" (AFNetworking's `+manager`: reachable when a
// default route exists over a running interface).
//
// On Linux the manager follows the kernel's routing table through netlink; nothing is sent on the network. The
// AFNetworking-style change block (`setReachabilityStatusChangeBlock`) sees the same statuses as the
// `statusUpdates` stream used here.
import ArgumentParser
import Dispatch
import Foundation
import NIOCore
import TetherReachability

@main
struct ReachWatch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reach-watch",
        abstract: "Print the reachability status, then one line per change."
    )

    @Option(help: "Watch the reachability of this host name (resolved again after each network change).")
    var domain: String?

    @Option(help: "Watch the reachability of this IPv4 or IPv6 address.")
    var address: String?

    @Option(help: "Exit after printing this many lines.")
    var count: Int?

    func validate() throws {
        guard domain == nil || address == nil else {
            throw ValidationError("--domain and --address exclude each other.")
        }
        guard domain != "" else { throw ValidationError("--domain needs a host name.") }
        if let address, (try? SocketAddress(ipAddress: address, port: 0)) == nil {
            throw ValidationError("--address needs an IPv4 or IPv6 address, not '\(address)'.")
        }
        guard (count ?? 1) >= 1 else { throw ValidationError("--count must be at least 1.") }
    }

    func run() async throws {
        // Callbacks go to a queue of our own: a command-line tool's main queue does not run while `main` awaits.
        let queue = DispatchQueue(label: "reach-watch.callbacks")
        let manager: NetworkReachabilityManager
        if let domain {
            manager = NetworkReachabilityManager(domain: domain, callbackQueue: queue)
        } else if let address {
            manager = NetworkReachabilityManager(
                address: try SocketAddress(ipAddress: address, port: 0),
                callbackQueue: queue
            )
        } else {
            manager = NetworkReachabilityManager(callbackQueue: queue)
        }
        // Evaluates before returning; the first status is the stream's first element.
        manager.startMonitoring()
        if let error = manager.lastError {
            printError("error: \(error) (retrying every 5 s)")
        }
        var printed = 0
        for await status in manager.statusUpdates {
            printLine(Self.describe(status, path: manager.path))
            printed += 1
            if printed == count { break }
        }
        manager.stopMonitoring()
    }

    /// "Reachable via WiFi (lo, loopback)", or the status alone when there is no egress interface.
    static func describe(_ status: NetworkReachabilityStatus, path: NetworkPath) -> String {
        let isReachable = ![.unknown, .notReachable].contains(status)
        guard isReachable, let interface = path.interfaceName else { return status.localizedDescription }
        return "\(status.localizedDescription) (\(interface), \(path.interfaceType?.rawValue ?? "other"))"
    }
}

/// Writes a line to standard output at once (`print` keeps it in a buffer while stdout is a pipe).
func printLine(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

/// Writes a line to standard error.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
