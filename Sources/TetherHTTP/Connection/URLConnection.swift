public import Foundation
import NIOCore
import NIOFoundationCompat
import TetherConcurrency

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// NSURLConnection's semantics on AsyncHTTPClient: create with a request and a delegate, start now or later,
/// deliver on an operation queue or run loops, cancel into silence.
///
/// ```swift
/// let connection = URLConnection(request: request, delegate: self, startImmediately: false)!
/// connection.setDelegateQueue(queue)
/// connection.start()
/// ```
///
/// Delegate calls go, in order of precedence, to the queue given to ``setDelegateQueue(_:)`` (one
/// `BlockOperation` per call, never overlapping), else to the run loops given to
/// ``schedule(in:forMode:)``, else to the run loop that was current when the connection was created
/// (`.default` mode). The delegate is retained from ``start()`` until the terminal callback or ``cancel()``.
///
/// Threads: the delegate is called only on that delivery target, one call at a time, never on the engine's threads.
/// Every method and property of the connection is thread-safe and may be called from any thread, including from
/// inside a delegate call. ``setDelegateQueue(_:)``, ``schedule(in:forMode:)`` and ``unschedule(from:forMode:)`` take
/// effect only before ``start()``. The connection never touches the delegate outside the delivery target, except to
/// release it (on whichever thread ends the load or cancels it).
// Sendable: its mutable state (delegate, target, load) is in a `LockedBox`, read and changed only under its lock,
// and the delegate is only called on the delivery target through `DelegateDelivery`.
public final class URLConnection: @unchecked Sendable {
    private struct State {
        var delegate: (any URLConnectionDelegate)?
        /// The same delegate as a data delegate, cast once (nil when it is not one, and once it is released).
        var dataDelegate: (any URLConnectionDataDelegate)?
        /// The load's task runs on a ``FlushingExecutor``: its response, data and end are submitted deferred.
        var defersDelivery = false
        var isStarted = false
        var isCancelled = false
        var isTerminated = false
        var delegateQueue: OperationQueue?
        var runLoops: [(RunLoop, RunLoop.Mode)] = []
        var load: HTTPLoad?
        var delivery: DelegateDelivery?
        var currentRequest: URLRequest
    }

    private let state: LockedBox<State>
    // Sendable: only handed to `DelegateDelivery`, which calls the thread-safe `perform(inModes:block:)` on it.
    private let creationRunLoop: UncheckedSendableBox<RunLoop>
    let window = FlowWindow(limit: 1 << 20)

    /// The request the connection was created with.
    public let originalRequest: URLRequest
    /// The engine settings.
    public let configuration: Configuration

    /// Creates a connection.
    ///
    /// - Parameters:
    ///   - request: The request to load.
    ///   - delegate: The delegate; retained from start until the end of the load.
    ///   - startImmediately: Whether to start now; pass false to choose the delivery target first.
    ///   - configuration: The engine settings.
    /// - Returns: nil when ``canHandle(_:)`` is false for `request`.
    public init?(
        request: URLRequest,
        delegate: (any URLConnectionDelegate)?,
        startImmediately: Bool,
        configuration: Configuration = .default
    ) {
        guard Self.canHandle(request) else { return nil }
        self.originalRequest = request
        self.configuration = configuration
        self.creationRunLoop = UncheckedSendableBox(RunLoop.current)
        let dataDelegate = delegate as? any URLConnectionDataDelegate
        self.hasDataDelegate = dataDelegate != nil
        self.collectsMetrics = delegate is any URLConnectionMetricsDelegate
        self.state = LockedBox(State(delegate: delegate, dataDelegate: dataDelegate, currentRequest: request))
        if startImmediately { self.start() }
    }

    /// Creates a connection that starts at once and delivers on the current thread's run loop.
    ///
    /// - Parameters:
    ///   - request: The request to load.
    ///   - delegate: The delegate.
    public convenience init?(request: URLRequest, delegate: (any URLConnectionDelegate)?) {
        self.init(request: request, delegate: delegate, startImmediately: true)
    }

    /// The request after canonicalisation and redirects.
    public var currentRequest: URLRequest {
        self.state.withLock { $0.load?.currentRequest ?? $0.currentRequest }
    }

    /// Starts the load. Does nothing if already started or cancelled.
    public func start() {
        let load: HTTPLoad? = self.state.withLock { state in
            guard !state.isStarted, !state.isCancelled else { return nil }
            state.isStarted = true
            let target: DelegateDelivery.Target
            if let queue = state.delegateQueue {
                target = .queue(queue)
            } else if !state.runLoops.isEmpty {
                target = .runLoops(state.runLoops)
            } else {
                target = .runLoops([(self.creationRunLoop.value, .default)])
            }
            let delivery = DelegateDelivery(target: target) { event, isLive in self.deliver(event, isLive: isLive) }
            state.delivery = delivery
            let load = HTTPLoad(request: self.originalRequest, configuration: self.configuration, observer: self)
            if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) {
                // The calls the load produces in one go (response, data, finish) reach the target together.
                // A load whose code cannot block (no body stream to read, no disk cache to write) runs on the
                // engine's loops where they resume it.
                load.prefer(executor: FlushingExecutor(loops: load.loopsToRunOn) { delivery.flush() })
                state.defersDelivery = true
            }
            state.load = load
            return load
        }
        guard let load else { return }
        let canonical = HTTPLoad.canonicalize(self.originalRequest)
        let (delivery, dataDelegate) = self.state.withLock { ($0.delivery, $0.dataDelegate) }
        guard let delivery, let dataDelegate, !DefaultWillSend.isDefault(for: type(of: dataDelegate)) else {
            load.start(canonical: canonical)
            return
        }
        // The canonical `willSend` runs on the delivery target, and the load starts there once it answered: the
        // load does not wait in a task of its own for a round trip to the delegate.
        delivery.submit { isLive in
            // Not live: cancelled before the delegate was asked; the load never starts.
            guard isLive else { return }
            guard let dataDelegate = self.state.withLock({ $0.dataDelegate }) else {
                load.start(canonical: canonical)
                return
            }
            guard let decided = dataDelegate.connection(self, willSend: canonical, redirectResponse: nil) else {
                self.terminate()
                return
            }
            load.start(canonical: decided)
        }
    }

    /// Cancels the load: no delegate call begins after this returns, and the delegate is released.
    /// A call already running on another thread may finish.
    public func cancel() {
        let (delivery, load, delegate) = self.state.withLock {
            state -> (DelegateDelivery?, HTTPLoad?, (any URLConnectionDelegate)?) in
            guard !state.isCancelled else { return (nil, nil, nil) }
            state.isCancelled = true
            if let load = state.load { state.currentRequest = load.currentRequest }
            defer {
                state.delegate = nil
                state.dataDelegate = nil
                state.load = nil
                state.delivery = nil
            }
            return (state.delivery, state.load, state.delegate)
        }
        delivery?.close()
        self.window.close()
        load?.cancel(.cancelled)
        withExtendedLifetime(delegate) {}
    }

    /// Delivers delegate calls on `queue` (one operation per call, never overlapping). Call before ``start()``;
    /// takes precedence over run loops.
    ///
    /// - Parameter queue: The queue, or nil to go back to run loops.
    public func setDelegateQueue(_ queue: OperationQueue?) {
        self.state.withLock { state in
            guard !state.isStarted else { return }
            state.delegateQueue = queue
        }
    }

    /// Adds a run loop and mode for delegate calls. Call before ``start()``; may be called repeatedly. Each call
    /// runs once, on the first of the scheduled run loops to run it.
    ///
    /// - Parameters:
    ///   - aRunLoop: The run loop.
    ///   - mode: The mode in which it runs the calls.
    public func schedule(in aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {
        self.state.withLock { state in
            guard !state.isStarted else { return }
            if !state.runLoops.contains(where: { $0.0 === aRunLoop && $0.1 == mode }) {
                state.runLoops.append((aRunLoop, mode))
            }
        }
    }

    /// Removes a run loop and mode added with ``schedule(in:forMode:)``. Call before ``start()``.
    ///
    /// - Parameters:
    ///   - aRunLoop: The run loop.
    ///   - mode: The mode.
    public func unschedule(from aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {
        self.state.withLock { state in
            guard !state.isStarted else { return }
            state.runLoops.removeAll { $0.0 === aRunLoop && $0.1 == mode }
        }
    }

    /// Whether a connection can load `request`: an http or https URL with a host.
    ///
    /// - Parameter request: The request.
    /// - Returns: true for http(s) URLs with a host.
    public static func canHandle(_ request: URLRequest) -> Bool {
        guard let url = request.url, let scheme = url.scheme, Self.isHTTPScheme(scheme),
            let host = url.host(percentEncoded: true), !host.isEmpty
        else { return false }
        // A host without percent-encoding is what it says; one with it must also decode.
        return !host.utf8.contains(UInt8(ascii: "%")) || !(url.host ?? "").isEmpty
    }

    /// "http" or "https", in any case; the usual lowercase spelling without making a lowercase copy.
    private static func isHTTPScheme(_ scheme: String) -> Bool {
        if scheme == "http" || scheme == "https" { return true }
        let lowercase = scheme.lowercased()
        return lowercase == "http" || lowercase == "https"
    }

    /// A platform-neutral answer to an authentication challenge (see ``answer(_:with:)``).
    public enum ChallengeDisposition: Sendable {
        /// Retry with this credential.
        case useCredential(URLCredential)
        /// Deliver the 401/407 as the response.
        case continueWithoutCredential
        /// Fail the load with `URLError(.userCancelledAuthentication)`.
        case cancel
        /// The URL's user and password, else the shared credential storage, each once per load.
        case performDefaultHandling
        /// Skip this protection space; with a single space the 401/407 is delivered.
        case rejectProtectionSpace
    }

    /// Answers a challenge that this connection delivered. The first answer wins; later ones are ignored.
    ///
    /// - Parameters:
    ///   - challenge: The challenge from `connection(_:willSendRequestFor:)`.
    ///   - disposition: The answer.
    public func answer(_ challenge: URLAuthenticationChallenge, with disposition: ChallengeDisposition) {
        (challenge.sender as? ChallengeSender)?.answer(disposition)
    }

    // MARK: - Delivery helpers

    var delegate: (any URLConnectionDelegate)? { self.state.withLock { $0.delegate } }

    var delivery: DelegateDelivery? { self.state.withLock { $0.delivery } }

    /// Whether the delegate takes data callbacks; the others are skipped without a trip to the delivery target.
    let hasDataDelegate: Bool

    /// Whether the delegate takes the load's metrics (``URLConnectionMetricsDelegate``): only then are they recorded.
    let collectsMetrics: Bool

    /// Posts `body` with the data delegate to the delivery target at once, without waiting: for upload progress,
    /// which may be reported from the engine's threads, outside the load's task (so never deferred).
    func postData(_ body: @escaping (any URLConnectionDataDelegate) -> Void) {
        guard let delivery = self.delivery else { return }
        delivery.submit { isLive in
            if isLive, let delegate = self.state.withLock({ $0.dataDelegate }) { body(delegate) }
        }
    }

    /// Runs `body` with the delegate on the delivery target and waits for its result.
    func call<Result>(
        default value: Result,
        _ body: @escaping (any URLConnectionDelegate) -> Result
    ) async
        -> Result
    {
        guard let delivery = self.delivery else { return value }
        // Sendable: `value`, `body` and the result are each used on one side only: the delivery target, then the
        // caller after the continuation resumed.
        let boxedValue = UncheckedSendableBox(value)
        let boxedBody = UncheckedSendableBox(body)
        let result: UncheckedSendableBox<Result> = await withCheckedContinuation { continuation in
            delivery.submit { isLive in
                guard isLive, let delegate = self.delegate else {
                    continuation.resume(returning: boxedValue)
                    return
                }
                continuation.resume(returning: UncheckedSendableBox(boxedBody.value(delegate)))
            }
        }
        return result.value
    }

    /// Hands `event` to the delivery target, deferred to the load's next flush when its task runs on a
    /// ``FlushingExecutor``; without a delivery (cancelled or ended), runs what it must do even when dead.
    func submit(_ event: DelegateDelivery.Event) {
        let (delivery, deferred) = self.state.withLock { ($0.delivery, $0.defersDelivery) }
        guard let delivery else {
            self.deliver(event, isLive: false)
            return
        }
        delivery.submit(event, deferred: deferred)
    }

    /// Runs `event` on the delivery target: the delegate call while live, then what must happen either way (the
    /// flow window gets its bytes back; a terminal event ends the connection).
    private func deliver(_ event: DelegateDelivery.Event, isLive: Bool) {
        switch event {
        case .response(let response):
            if isLive, let delegate = self.state.withLock({ $0.dataDelegate }) {
                delegate.connection(self, didReceive: response)
            }
        case .data(let data):
            if isLive, let delegate = self.state.withLock({ $0.dataDelegate }) {
                delegate.connection(self, didReceive: data)
            }
            self.window.release(data.count)
        case .metrics(let metrics):
            if isLive, let delegate = self.delegate as? any URLConnectionMetricsDelegate {
                delegate.connection(self, didFinishCollecting: metrics)
            }
        case .finish:
            if isLive, let delegate = self.state.withLock({ $0.dataDelegate }) {
                delegate.connectionDidFinishLoading(self)
            }
            self.terminate()
        case .failure(let error):
            if isLive, let delegate = self.delegate { delegate.connection(self, didFailWithError: error) }
            self.terminate()
        }
    }

    /// Ends the load after its terminal callback: releases the delegate, the load and the delivery.
    func terminate() {
        let delivery: DelegateDelivery? = self.state.withLock { state in
            state.isTerminated = true
            if let load = state.load { state.currentRequest = load.currentRequest }
            state.delegate = nil
            state.dataDelegate = nil
            state.load = nil
            defer { state.delivery = nil }
            return state.delivery
        }
        delivery?.close()
    }
}
