/// The back-end of a platform without one: it never starts, so the status stays `.unknown` with `lastError` set.
struct UnavailablePathMonitor: NetworkPathMonitoring {
    func start(_ handler: @escaping @Sendable (NetworkPath) -> Void) throws {
        throw NetworkReachabilityError(
            code: .backendUnavailable,
            message: "no reachability back-end exists on this platform"
        )
    }

    func stop() {}
}
