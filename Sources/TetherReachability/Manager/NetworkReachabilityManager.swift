public import Dispatch
import Foundation
public import NIOCore
import TetherConcurrency

/// Monitors whether a destination is reachable, with AFNetworking's `AFNetworkReachabilityManager` semantics.
///
/// "Reachable" means the kernel would route a packet to the target over an interface that is up and running; it
/// never means a server answers. Use it to explain a failure or to time a retry, not to gate a request.
///
/// ```swift
/// let manager = NetworkReachabilityManager(domain: "example.com", callbackQueue: .global())
/// manager.setReachabilityStatusChangeBlock { status in print(status) }
/// manager.startMonitoring()
/// print(manager.networkReachabilityStatus)   // already evaluated
/// ```
///
/// Threads: every member may be called from any thread. The change block, the
/// ``Foundation/NSNotification/Name/networkReachabilityDidChange`` notification and ``statusUpdates`` are delivered
/// on the callback queue only, in the order of evaluations; the back-end's handler runs on the back-end's own thread
/// and never calls user code. No lock is held while user code runs. A manager that nobody retains stops monitoring
/// when it is deallocated.
public final class NetworkReachabilityManager: Sendable {
    /// The shared "any route" manager (AFNetworking's `+sharedManager`), delivering on the main queue.
    public static let shared = NetworkReachabilityManager()

    private let monitor: any NetworkPathMonitoring
    private let callbackQueue: DispatchQueue
    private let retryInterval: Duration
    private let state = LockedBox(ManagerState())
    /// Serialises the back-end's starts and stops (user calls and retries), never held while calling user code. It
    /// guards the back-end, not a value: the box holds none.
    private let lifecycle = LockedBox(())

    /// Creates an "any route" manager: reachable when a default route exists over a running interface
    /// (AFNetworking's `+manager`, the zero address).
    /// - Parameter callbackQueue: where the change block, the notification and `statusUpdates` are delivered.
    ///   On Linux command-line tools the main queue only runs under `dispatchMain()` or an async `main`.
    public convenience init(callbackQueue: DispatchQueue = .main) {
        self.init(
            monitor: Self.platformMonitor(for: .defaultRoute),
            callbackQueue: callbackQueue,
            retryInterval: .seconds(5)
        )
    }

    /// Creates a manager for a host name (AFNetworking's `+managerForDomain:`): the name is resolved with
    /// `getaddrinfo` when monitoring starts and after each network change; reachable when any address is.
    /// - Parameters:
    ///   - domain: the host name; must not be empty (a precondition).
    ///   - callbackQueue: where callbacks are delivered.
    public convenience init(domain: String, callbackQueue: DispatchQueue = .main) {
        precondition(!domain.isEmpty, "NetworkReachabilityManager(domain:) needs a non-empty host name")
        self.init(
            monitor: Self.platformMonitor(for: .domain(domain)),
            callbackQueue: callbackQueue,
            retryInterval: .seconds(5)
        )
    }

    /// Creates a manager for one IPv4 or IPv6 address (AFNetworking's `+managerForAddress:`).
    /// - Parameters:
    ///   - address: an IPv4 or IPv6 address (a precondition: not a Unix domain socket address); the port is
    ///     ignored.
    ///   - callbackQueue: where callbacks are delivered.
    public convenience init(address: SocketAddress, callbackQueue: DispatchQueue = .main) {
        guard let bytes = IPAddressBytes(address) else {
            preconditionFailure("NetworkReachabilityManager(address:) needs an IPv4 or IPv6 address, not \(address)")
        }
        self.init(
            monitor: Self.platformMonitor(for: .address(bytes)),
            callbackQueue: callbackQueue,
            retryInterval: .seconds(5)
        )
    }

    /// Creates a manager over a given back-end (a fake in tests).
    /// - Parameters:
    ///   - monitor: the back-end; a monitor that reports inside `start` gives a synchronous first status.
    ///   - callbackQueue: where callbacks are delivered.
    public convenience init(monitor: any NetworkPathMonitoring, callbackQueue: DispatchQueue = .main) {
        self.init(monitor: monitor, callbackQueue: callbackQueue, retryInterval: .seconds(5))
    }

    /// Creates a manager with a chosen retry interval for back-ends that fail to start.
    init(monitor: any NetworkPathMonitoring, callbackQueue: DispatchQueue, retryInterval: Duration) {
        self.monitor = monitor
        self.callbackQueue = callbackQueue
        self.retryInterval = retryInterval
    }

    deinit {
        monitor.stop()
        let streams = state.withLock { state in
            defer { state.streams = [:] }
            return state.streams.values.map(\.continuation)
        }
        for stream in streams {
            stream.finish()
        }
    }

    // MARK: Status

    /// The last evaluated status; `.unknown` until the first evaluation. Kept when monitoring stops.
    public var networkReachabilityStatus: NetworkReachabilityStatus { path.status }

    /// Whether the status is reachable via WWAN, WiFi or Ethernet.
    public var isReachable: Bool { networkReachabilityStatus.isReachable }

    /// Whether the status is `.reachableViaWWAN`.
    public var isReachableViaWWAN: Bool { networkReachabilityStatus == .reachableViaWWAN }

    /// Whether the status is `.reachableViaWiFi`.
    public var isReachableViaWiFi: Bool { networkReachabilityStatus == .reachableViaWiFi }

    /// Whether the status is `.reachableViaEthernet`.
    public var isReachableViaEthernet: Bool { networkReachabilityStatus == .reachableViaEthernet }

    /// The last evaluation with its egress interface (with ``reportsEthernetAsWiFi`` applied).
    public var path: NetworkPath {
        state.withLock { $0.reportedPath }
    }

    /// Whether wired Ethernet is reported as `.reachableViaWiFi`, as AFNetworking did on macOS. Default `false`.
    public var reportsEthernetAsWiFi: Bool {
        get { state.withLock { $0.reportsEthernetAsWiFi } }
        set { state.withLock { $0.reportsEthernetAsWiFi = newValue } }
    }

    /// How long changes are gathered before one delivery. Default zero: each change is delivered at once.
    ///
    /// With a window, the first change after a delivery opens it; the changes until it closes are coalesced into one
    /// delivery of the final status when it closes, and into none when that status and interface are the ones last
    /// delivered (a link that flaps inside the window). The first evaluation after ``startMonitoring()`` is always
    /// delivered at once, and ``networkReachabilityStatus`` and ``path`` always show the latest evaluation. A new
    /// window applies from the next change on.
    public var debounceInterval: Duration {
        get { state.withLock { $0.debouncer.window } }
        set { state.withLock { $0.debouncer.window = max(newValue, .zero) } }
    }

    /// Whether the manager is monitoring (between ``startMonitoring()`` and ``stopMonitoring()``).
    public var isMonitoring: Bool {
        state.withLock { $0.isMonitoring }
    }

    /// Why the back-end could not evaluate: it could not start (the status stays `.unknown` and the start is
    /// retried every 5 seconds) or it failed later (the last status is kept). Cleared by the next evaluation.
    public var lastError: (any Error)? {
        state.withLock { $0.lastError?.value }
    }

    /// The status's English description ("Reachable via WiFi").
    /// - Returns: `networkReachabilityStatus.localizedDescription`.
    public func localizedNetworkReachabilityStatusString() -> String {
        networkReachabilityStatus.localizedDescription
    }

    // MARK: Monitoring

    /// Stops any monitoring, then starts again and evaluates before returning, so ``networkReachabilityStatus``
    /// is valid at once; the callbacks for that first evaluation still arrive asynchronously on the callback queue.
    ///
    /// When the back-end cannot start, the status stays `.unknown`, ``lastError`` says why, and the start is
    /// retried every 5 seconds while monitoring.
    public func startMonitoring() {
        lifecycle.withLock { _ in
            stopBackend()
            let generation = state.withLock { state in
                state.generation &+= 1
                state.isMonitoring = true
                state.debouncer.reset()
                return state.generation
            }
            attemptStart(generation: generation)
        }
    }

    /// Stops monitoring; no callback is delivered after it returns. The last status is kept.
    public func stopMonitoring() {
        lifecycle.withLock { _ in stopBackend() }
    }

    /// Stops the back-end and invalidates the running start (the caller holds `lifecycle`).
    private func stopBackend() {
        let wasMonitoring = state.withLock { state in
            defer {
                state.isMonitoring = false
                state.generation &+= 1
            }
            return state.isMonitoring
        }
        if wasMonitoring {
            monitor.stop()
        }
    }

    /// Sets the block called on the callback queue with each delivered status (the first after each start, then
    /// every change of status or egress interface); `nil` removes it.
    /// - Parameter block: the block, or `nil`.
    public func setReachabilityStatusChangeBlock(_ block: (@Sendable (NetworkReachabilityStatus) -> Void)?) {
        state.withLock { $0.changeBlock = block }
    }

    /// A new stream per access: the current status first (when monitoring), then every delivered status, after
    /// the change block and the notification. Keeps the newest 16 when the reader falls behind; finishes when the
    /// manager is deallocated.
    public var statusUpdates: AsyncStream<NetworkReachabilityStatus> {
        AsyncStream(bufferingPolicy: .bufferingNewest(16)) { continuation in
            let id = state.withLock { state in
                let id = state.nextStreamID
                state.nextStreamID &+= 1
                state.streams[id] = (continuation, state.deliverySequence)
                if state.isMonitoring {
                    continuation.yield(state.reportedPath.status)
                }
                return id
            }
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { _ = $0.streams.removeValue(forKey: id) }
            }
        }
    }

    // MARK: Back-end events

    /// Starts the back-end for `generation` (the caller holds `lifecycle`); on failure, schedules a retry.
    private func attemptStart(generation: UInt64) {
        let handler: @Sendable (NetworkPath) -> Void = { [weak self] path in
            self?.receive(path, generation: generation)
        }
        do {
            if let reporting = monitor as? any NetworkPathErrorReporting {
                try reporting.start(handler) { [weak self] error in
                    self?.receive(error, generation: generation)
                }
            } else {
                try monitor.start(handler)
            }
        } catch {
            let isCurrent = state.withLock { state in
                guard state.generation == generation, state.isMonitoring else { return false }
                state.lastError = UncheckedSendableBox(error)
                return true
            }
            guard isCurrent else { return }
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.timeInterval(retryInterval)) { [weak self] in
                guard let self else { return }
                self.lifecycle.withLock { _ in
                    guard self.state.withLock({ $0.generation == generation && $0.isMonitoring }) else { return }
                    self.attemptStart(generation: generation)
                }
            }
        }
    }

    private func receive(_ path: NetworkPath, generation: UInt64) {
        state.withLock { state in
            guard state.generation == generation, state.isMonitoring else { return }
            state.path = path
            state.lastError = nil
            let actions = state.debouncer.evaluated(state.reportedPath, at: .now)
            execute(actions, in: &state, generation: generation)
        }
    }

    /// Executes the debouncer's actions (the caller holds the state lock).
    private func execute(
        _ actions: [DeliveryDebouncer<ContinuousClock.Instant>.Action],
        in state: inout ManagerState,
        generation: UInt64
    ) {
        for action in actions {
            switch action {
            case .deliver(let reported):
                state.deliverySequence &+= 1
                let sequence = state.deliverySequence
                // Enqueued under the lock so deliveries keep the order of evaluations from any thread.
                callbackQueue.async { [weak self] in
                    self?.deliver(reported.status, sequence: sequence, generation: generation)
                }
            case .armTimer(let id, let deadline):
                let delay = Self.timeInterval(max(deadline - .now, .zero))
                DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in
                    self?.windowClosed(timer: id, generation: generation)
                }
            }
        }
    }

    private func windowClosed(timer id: UInt64, generation: UInt64) {
        state.withLock { state in
            guard state.generation == generation, state.isMonitoring else { return }
            execute(state.debouncer.timerFired(id: id), in: &state, generation: generation)
        }
    }

    private func receive(_ error: any Error, generation: UInt64) {
        state.withLock { state in
            guard state.generation == generation, state.isMonitoring else { return }
            state.lastError = UncheckedSendableBox(error)
        }
    }

    private func deliver(_ status: NetworkReachabilityStatus, sequence: UInt64, generation: UInt64) {
        let delivery = state.withLock { state -> (ManagerState.ChangeBlock?, [ManagerState.Continuation])? in
            guard state.generation == generation, state.isMonitoring else { return nil }
            let streams = state.streams.values.filter { $0.createdAt < sequence }.map(\.continuation)
            return (state.changeBlock, streams)
        }
        guard let (block, streams) = delivery else { return }
        block?(status)
        NotificationCenter.default.post(
            name: .networkReachabilityDidChange,
            object: self,
            userInfo: [NetworkReachabilityNotificationStatusItem: status.rawValue]
        )
        for stream in streams {
            stream.yield(status)
        }
    }

    private static func timeInterval(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    private static func platformMonitor(for target: ReachabilityTarget) -> any NetworkPathMonitoring {
        #if os(Linux)
        NetlinkPathMonitor(target: target)
        #elseif canImport(Network)
        NWPathMonitorBackend()
        #else
        UnavailablePathMonitor()
        #endif
    }
}

/// The manager's mutable state, behind its lock.
private struct ManagerState {
    typealias ChangeBlock = @Sendable (NetworkReachabilityStatus) -> Void
    typealias Continuation = AsyncStream<NetworkReachabilityStatus>.Continuation

    var generation: UInt64 = 0
    var isMonitoring = false
    var path = NetworkPath(status: .unknown)
    var reportsEthernetAsWiFi = false
    // Sendable: the error is only stored and handed back out by `lastError`; the manager never reads into it.
    var lastError: UncheckedSendableBox<any Error>?
    /// Which evaluations are delivered, and when.
    var debouncer = DeliveryDebouncer<ContinuousClock.Instant>()
    var changeBlock: ChangeBlock?
    var deliverySequence: UInt64 = 0
    var nextStreamID: UInt64 = 0
    /// Each stream with the delivery sequence number current when it was made (it already holds that status).
    var streams: [UInt64: (continuation: Continuation, createdAt: UInt64)] = [:]

    /// The back-end's path with `reportsEthernetAsWiFi` applied.
    var reportedPath: NetworkPath {
        reportsEthernetAsWiFi ? path.reportingEthernetAsWiFi() : path
    }
}
