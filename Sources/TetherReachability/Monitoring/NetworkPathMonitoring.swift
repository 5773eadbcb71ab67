/// A platform back-end that evaluates reachability and reports each new path.
///
/// ``NetworkReachabilityManager`` drives one; inject a fake through
/// ``NetworkReachabilityManager/init(monitor:callbackQueue:)`` in tests. A monitor that calls `handler` before
/// `start` returns gives the manager its synchronous first status.
public protocol NetworkPathMonitoring: Sendable {
    /// Starts evaluating and reports every path (the first one, then each change) to `handler`, from any thread.
    /// - Parameter handler: receives each evaluated path.
    /// - Throws: when the back-end cannot start; the manager then keeps `.unknown`, sets
    ///   ``NetworkReachabilityManager/lastError`` and retries every 5 seconds.
    func start(_ handler: @escaping @Sendable (NetworkPath) -> Void) throws
    /// Stops evaluating; no path is reported after it returns.
    func stop()
}

/// A back-end that can also report failures after it started (Tether's own back-ends).
protocol NetworkPathErrorReporting: NetworkPathMonitoring {
    /// Like `start(_:)`, and reports back-end failures after the start to `errorHandler`.
    func start(
        _ handler: @escaping @Sendable (NetworkPath) -> Void,
        errorHandler: @escaping @Sendable (any Error) -> Void
    ) throws
}
