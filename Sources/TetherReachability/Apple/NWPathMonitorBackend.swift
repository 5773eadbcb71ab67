#if canImport(Network)
import Dispatch
import Network
import TetherConcurrency

/// The Apple back-end: `NWPathMonitor`, reporting the general path (Network.framework has no per-destination
/// evaluation, and SCNetworkReachability is deprecated).
final class NWPathMonitorBackend: NetworkPathMonitoring {
    /// How long `start` waits for the monitor's first path.
    static let firstPathTimeout: DispatchTimeInterval = .seconds(2)

    private let queue = DispatchQueue(label: "tether.reachability.nwpathmonitor")
    private let monitor = LockedBox<NWPathMonitor?>(nil)

    init() {}

    func start(_ handler: @escaping @Sendable (NetworkPath) -> Void) throws {
        stop()
        let pathMonitor = NWPathMonitor()
        let firstPath = DispatchSemaphore(value: 0)
        let isFirst = LockedBox(true)
        pathMonitor.pathUpdateHandler = { path in
            handler(Self.makePath(path))
            let wasFirst = isFirst.withLock { first in
                defer { first = false }
                return first
            }
            if wasFirst {
                firstPath.signal()
            }
        }
        monitor.withLock { $0 = pathMonitor }
        pathMonitor.start(queue: queue)
        // NWPathMonitor reports the current path promptly after start: wait for it so the status is known when
        // startMonitoring returns.
        _ = firstPath.wait(timeout: .now() + Self.firstPathTimeout)
    }

    func stop() {
        monitor.withLock { monitor in
            defer { monitor = nil }
            return monitor
        }?.cancel()
    }

    static func makePath(_ path: NWPath) -> NetworkPath {
        guard path.status == .satisfied else { return NetworkPath(status: .notReachable) }
        let type: NetworkPath.InterfaceType =
            if path.usesInterfaceType(.wifi) {
                .wifi
            } else if path.usesInterfaceType(.cellular) {
                .cellular
            } else if path.usesInterfaceType(.wiredEthernet) {
                .wiredEthernet
            } else if path.usesInterfaceType(.loopback) {
                .loopback
            } else {
                .other
            }
        let interface = path.availableInterfaces.first { path.usesInterfaceType($0.type) }
        return NetworkPath(
            status: type.reachableStatus,
            interfaceName: interface?.name,
            interfaceType: type,
            isExpensive: path.isExpensive,
            supportsIPv4: path.supportsIPv4,
            supportsIPv6: path.supportsIPv6,
            isConstrained: path.isConstrained,
            interfaceKind: kind(of: interface?.name, type: type)
        )
    }

    /// Network.framework reports a VPN's interface as `.other`; its name tells it (`utun`, `ipsec`, `ppp`).
    static func kind(of name: String?, type: NetworkPath.InterfaceType) -> NetworkPath.InterfaceKind {
        guard type == .other, let name else { return NetworkPath.InterfaceKind(type) }
        let isVPN = ["utun", "ipsec", "ppp", "tun", "tap", "wg"].contains { name.hasPrefix($0) }
        return isVPN ? .vpn : NetworkPath.InterfaceKind(type)
    }
}
#endif
