import Dispatch
import NIOCore

extension NetworkReachabilityManager {
    /// Waits until `host` is reachable, as `URLSession`'s `waitsForConnectivity` waits before a request.
    ///
    /// Makes a manager for `host` (an address manager for an IP address, else a domain manager), starts it off the
    /// calling task's thread, and returns as soon as a route to the host exists over a running interface: at once
    /// when one exists already.
    ///
    /// ```swift
    /// let path = try await NetworkReachabilityManager.waitForConnectivity(to: "example.com", timeout: .seconds(30))
    /// print("reachable via \(path.interfaceName ?? "?")")
    /// ```
    /// - Parameters:
    ///   - host: a host name or an IPv4 or IPv6 address.
    ///   - timeout: how long to wait; zero or less checks once.
    /// - Returns: the first reachable path.
    /// - Throws: `NetworkReachabilityError` with code `.connectivityTimedOut` when no route appeared in time (its
    ///   `underlying` is the back-end's error when it could not evaluate at all), `.invalidHost` for an empty host,
    ///   `CancellationError` when the task is cancelled.
    public static func waitForConnectivity(to host: String, timeout: Duration) async throws -> NetworkPath {
        guard !host.isEmpty else {
            throw NetworkReachabilityError(code: .invalidHost, message: "waitForConnectivity(to:) needs a host name")
        }
        let queue = DispatchQueue(label: "tether.reachability.wait")
        let manager: NetworkReachabilityManager
        if let address = try? SocketAddress(ipAddress: host, port: 0) {
            manager = NetworkReachabilityManager(address: address, callbackQueue: queue)
        } else {
            manager = NetworkReachabilityManager(domain: host, callbackQueue: queue)
        }
        defer { manager.stopMonitoring() }
        return try await manager.waitForConnectivity(timeout: timeout, describing: host)
    }

    /// Waits until this manager's target is reachable; starts monitoring first (off the calling task's thread) when
    /// it is not monitoring, and leaves it monitoring.
    ///
    /// Statuses arrive through ``statusUpdates``, so the callback queue must run (on Linux command-line tools the
    /// main queue runs only under `dispatchMain()`: give such a manager a queue of its own).
    /// - Parameter timeout: how long to wait; zero or less checks once.
    /// - Returns: the first reachable path.
    /// - Throws: `NetworkReachabilityError` with code `.connectivityTimedOut` when the target did not become
    ///   reachable in time, `CancellationError` when the task is cancelled.
    public func waitForConnectivity(timeout: Duration) async throws -> NetworkPath {
        try await waitForConnectivity(timeout: timeout, describing: "the target")
    }

    private func waitForConnectivity(timeout: Duration, describing target: String) async throws -> NetworkPath {
        if !isMonitoring {
            // The first evaluation is synchronous (a netlink dump, a name lookup): not on a task's thread.
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    self.startMonitoring()
                    continuation.resume()
                }
            }
        }
        try Task.checkCancellation()
        if isReachable { return path }
        let timedOut = {
            NetworkReachabilityError(
                code: .connectivityTimedOut,
                message: "no route to \(target) within \(timeout)",
                underlying: self.lastError
            )
        }
        guard timeout > .zero else { throw timedOut() }
        return try await withThrowingTaskGroup(of: NetworkPath?.self) { group in
            group.addTask {
                // The stream yields the current status first, so a change made before it existed is not missed.
                for await status in self.statusUpdates where status.isReachable {
                    return self.path
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            for try await result in group {
                if let result { return result }
                break
            }
            try Task.checkCancellation()
            throw timedOut()
        }
    }
}
