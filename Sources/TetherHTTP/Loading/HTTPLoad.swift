import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import TetherConcurrency

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One load: canonicalisation, cache, hops with redirects and challenges, the streamed final response.
///
/// Runs in its own task (``start()``); every event goes to the observer, in order. Each request's response comes
/// to a ``ResponseReceiver`` that the load owns. ``cancel(_:)`` (the idle watchdog's, or the user's) records why,
/// ends that response after the parts it already received and stops the engine's request, so that the error
/// reported (if anyone still listens) says why, and no byte that arrived before it is lost.
final class HTTPLoad: Sendable {
    struct State {
        var task: Task<Void, Never>?
        var cancelCode: URLError.Code?
        var currentRequest: URLRequest
        var sender: ChallengeSender?
        /// The response of the request on the wire, if any.
        var receiver: ResponseReceiver?
        var isStarted = false
        /// A ``FlushingExecutor`` for the load's task (the delegate face), when the platform has task executors.
        var preferredExecutor: (any Sendable)?
    }

    let configuration: URLConnection.Configuration
    let observer: any LoadObserver
    let state: LockedBox<State>
    private let originalRequest: URLRequest

    init(request: URLRequest, configuration: URLConnection.Configuration, observer: any LoadObserver) {
        self.originalRequest = request
        self.configuration = configuration
        self.observer = observer
        self.state = LockedBox(State(currentRequest: request))
    }

    var currentRequest: URLRequest { self.state.withLock { $0.currentRequest } }

    /// The clock of the load's request and response times: the response cache's, else the system's.
    var clock: any HTTPCacheClock { self.configuration.responseCache?.clock ?? SystemHTTPCacheClock() }

    /// Starts the load: canonicalises the request, asks the observer about it (`loadWillSend` with no redirect
    /// response), then loads.
    func start() {
        self.start { await self.run() }
    }

    /// Starts the load with a canonical request the observer already accepted (``URLConnection`` asks its delegate
    /// on the delivery target first, so that the load does not wait for a round trip to it).
    func start(canonical request: URLRequest) {
        self.start { await self.run(canonical: request) }
    }

    /// Runs `body` in the load's task. (`Task.immediate`, which would save the hop to a new thread, was tried: under
    /// parallel tests its loads stalled until their idle timeouts fired, so it is not used.)
    private func start(_ body: @escaping @Sendable () async -> Void) {
        let shouldStart = self.state.withLock { state -> Bool in
            if state.isStarted { return false }
            state.isStarted = true
            return true
        }
        guard shouldStart else { return }
        self.prepareCookieStorage()
        let preferred = self.state.withLock { $0.preferredExecutor }
        let task: Task<Void, Never>
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *), let executor = preferred as? FlushingExecutor {
            task = Task(executorPreference: executor) { await body() }
        } else {
            task = Task { await body() }
        }
        let cancelled = self.state.withLock { state -> Bool in
            state.task = task
            return state.cancelCode != nil
        }
        if cancelled { task.cancel() }
    }

    /// Runs the load's task on `executor` (a ``FlushingExecutor``); call before starting.
    func prefer(executor: any Sendable) {
        self.state.withLock { $0.preferredExecutor = executor }
    }

    /// The engine's event loop group (the shared engines run on the configuration's group), without a lookup.
    var engineGroup: any EventLoopGroup {
        self.configuration.httpClient?.eventLoopGroup ?? self.configuration.eventLoopGroup
    }

    /// The engine's event loops, when the load's own code cannot block (no body stream to read, no disk cache to
    /// write), so that its task may run on them; else none.
    var loopsToRunOn: [any EventLoop] {
        guard self.originalRequest.httpBodyStream == nil, self.configuration.responseCache?.hasDisk != true else {
            return []
        }
        return Array(self.engineGroup.makeIterator())
    }

    /// Runs the load's task on the engine's loops where they resume it (``loopsToRunOn``), with nothing to do after
    /// each job: for the APIs without a delegate queue. Call before starting.
    func preferEngineLoops() {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) else { return }
        let loops = self.loopsToRunOn
        guard !loops.isEmpty else { return }
        self.prefer(executor: FlushingExecutor(loops: loops) {})
    }

    /// The shared cookie storage reads its file the first time it is used: that happens here, on the thread that
    /// starts the load, not on the event loop where a load's steps may run.
    private func prepareCookieStorage() {
        if self.originalRequest.httpShouldHandleCookies { _ = HTTPCookieStorage.shared }
    }

    /// Stops the load; the first reason wins. The response on the wire ends after the parts it already received
    /// (the load delivers them, then fails with `code`), and its engine request is cancelled.
    func cancel(_ code: URLError.Code = .cancelled) {
        let (task, sender, receiver, url) = self.state.withLock {
            state -> (Task<Void, Never>?, ChallengeSender?, ResponseReceiver?, URL?) in
            if state.cancelCode == nil { state.cancelCode = code }
            return (state.task, state.sender, state.receiver, state.currentRequest.url)
        }
        sender?.answer(.cancel)
        receiver?.cancel(URLError.tether(code, url: url))
        // An idle timeout stops the engine only: the load's task goes on to deliver what arrived before it.
        if code != .timedOut { task?.cancel() }
    }

    /// Makes `receiver` the load's current response; returns the reason when the load was cancelled already.
    func install(_ receiver: ResponseReceiver) -> URLError.Code? {
        self.state.withLock { state in
            state.receiver = receiver
            return state.cancelCode
        }
    }

    /// Stops the response on the wire, if any is left (the load ends without reading it to its end).
    private func releaseReceiver() {
        let receiver = self.state.withLock { state -> ResponseReceiver? in
            defer { state.receiver = nil }
            return state.receiver
        }
        receiver?.cancel(CancellationError())
    }

    var cancelCode: URLError.Code? { self.state.withLock { $0.cancelCode } }

    private func setCurrent(_ request: URLRequest) {
        self.state.withLock { $0.currentRequest = request }
    }

    // MARK: - The load sequence

    private func run() async {
        let request = Self.canonicalize(self.originalRequest)
        guard let canonical = await self.observer.loadWillSend(request, redirectResponse: nil) else {
            self.observer.loadDidStopSilently()
            return
        }
        await self.run(canonical: canonical)
    }

    private func run(canonical request: URLRequest) async {
        let watchdog = IdleWatchdog(
            timeoutInterval: self.originalRequest.timeoutInterval,
            // The current loop when the load runs on one of the engine's (then arming and cancelling the timer
            // costs no wake-up of another thread), else the next.
            eventLoop: self.engineGroup.any(),
            // Held until the watchdog stops (at the load's end) or fires: no weak reference to make.
            onFire: { self.cancel(.timedOut) }
        )
        let context = LoadContext(watchdog: watchdog, collectsMetrics: self.observer.collectsMetrics)
        self.setCurrent(request)
        watchdog?.start()
        do {
            guard let url = request.url else { throw URLError.tether(.badURL, url: nil) }
            guard URLConnection.canHandle(request) else { throw URLError.tether(.unsupportedURL, url: url) }
            try await self.perform(request, context: context)
            watchdog?.stop()
            self.releaseReceiver()
            if let code = self.cancelCode { throw URLError.tether(code, url: self.currentRequest.url) }
            if let metrics = context.metrics { self.observer.loadDidCollect(metrics.finish()) }
            await self.observer.loadDidFinish()
        } catch {
            watchdog?.stop()
            self.releaseReceiver()
            let url = self.currentRequest.url
            let mapped: URLError
            if let code = self.cancelCode {
                mapped = .tether(code, url: url, underlying: (error as? URLError)?.code == code ? nil : error)
            } else {
                mapped = URLErrorMapping.map(error, url: url)
            }
            self.configuration.logger?.debug(
                "load failed",
                metadata: ["url": "\(url.map { Redaction.url($0.absoluteString) } ?? "-")"]
            )
            if let metrics = context.metrics { self.observer.loadDidCollect(metrics.finish()) }
            await self.observer.loadDidFail(mapped)
        }
    }

    /// Revalidates the entry a `stale-while-revalidate` hit served, in a load that stores what it gets and tells
    /// nobody (``BackgroundRevalidation``); one at a time per entry.
    private func revalidateInBackground(_ request: URLRequest, entry: CacheEntry) {
        guard let cache = self.configuration.responseCache, let url = request.url else { return }
        let key = CacheRules.key(for: url)
        guard cache.beginRevalidation(key: key) else { return }
        var revalidation = request
        revalidation.cachePolicy = .reloadRevalidatingCacheData
        let observer = BackgroundRevalidation(
            storagePolicy: URLCache.StoragePolicy(rawValue: UInt(entry.storagePolicy)) ?? .allowed,
            onEnd: { cache.endRevalidation(key: key) }
        )
        HTTPLoad(request: revalidation, configuration: self.configuration, observer: observer).start()
    }

    /// Carries out the load's decisions (``HTTPLoadMachine``) until it delivers a response or fails.
    private func perform(_ request: URLRequest, context: LoadContext) async throws {
        let cache = self.configuration.responseCache
        guard let url = request.url else { throw URLError.tether(.badURL, url: nil) }
        // A HEAD is answered from, and freshens, the stored GET response (RFC 9110 §9.3.2, RFC 9111 §4.3.5).
        let lookedUp = cache != nil && ["GET", "HEAD"].contains(Self.method(of: request))
        let stored =
            lookedUp ? cache?.entry(for: request, asSent: { Self.requestAsSent($0, url: $0.url ?? url) }) : nil
        let variants = lookedUp && stored == nil ? cache?.variants(for: request) ?? [] : []
        let clock = self.clock
        var machine = HTTPLoadMachine(
            maximumRedirects: self.configuration.maximumRedirects,
            usesHeuristicFreshness: self.configuration.usesHeuristicFreshness
        )
        var action = machine.start(request, stored: stored, variants: variants, now: clock.now)
        var response: (receiver: ResponseReceiver, head: HTTPResponseHead, headers: [String: String])?
        // The last request as it went on the wire (with the cookies and credential Tether added).
        var sentRequest = request
        var requestDate = clock.now
        var bodySends = 0
        var lastError: URLError?
        var isRedirect = false
        while true {
            switch action {
            case .serve(let entry), .serveAndRevalidate(let entry):
                if let previous = response {
                    // A stale entry stands in for the server error just received (`stale-if-error`).
                    try await self.discard(previous.receiver, url: entry.url, context: context)
                }
                if let metrics = context.metrics {
                    metrics.servedFromCache(
                        self.currentRequest,
                        response: entry.makeServedResponse(now: clock.now),
                        bodyLength: entry.body.count
                    )
                }
                try await self.deliver(entry, context: context)
                if case .serveAndRevalidate = action { self.revalidateInBackground(request, entry: entry) }
                return
            case .fail(let code):
                if let lastError, lastError.code == code { throw lastError }
                if code == .badServerResponse, response?.head.status.code == 407 {
                    let message =
                        "the server answered 407 Proxy Authentication Required; no proxy credential is sent to it"
                    throw URLError.tether(code, url: self.currentRequest.url, message: message)
                }
                throw URLError.tether(code, url: self.currentRequest.url)
            case .send(let hop):
                self.setCurrent(hop.request)
                do {
                    if let previous = response {
                        response = nil
                        try await self.discard(previous.receiver, url: hop.url, context: context)
                    }
                    if let code = self.cancelCode { throw URLError.tether(code, url: hop.url) }
                    context.metrics?.willSend(hop.request, isRedirect: isRedirect)
                    isRedirect = false
                    let outgoing = try await self.outgoing(hop, bodySends: &bodySends, context: context)
                    sentRequest = Self.requestAsSent(hop.request, outgoing: outgoing.headers, hop: hop)
                    requestDate = clock.now
                    let (receiver, head) = try await self.send(outgoing, for: hop, context: context)
                    let headers = Self.headerDictionary(head.headers)
                    response = (receiver, head, headers)
                    let status = Int(head.status.code)
                    context.metrics?.headArrived(version: head.version)
                    if let cache { Self.invalidate(cache, after: hop, status: status, headers: headers) }
                    action = machine.received(
                        status: status,
                        headers: headers,
                        challenges: head.headers["WWW-Authenticate"],
                        version: VersionedHTTPURLResponse.versionString(
                            major: head.version.major,
                            minor: head.version.minor
                        ),
                        requestDate: requestDate,
                        now: clock.now
                    )
                } catch let error as URLError where !context.didDeliverResponse {
                    lastError = error
                    action = machine.failed(error.code)
                }
            case .askToFollow(let proposed, let redirectResponse):
                context.metrics?.setResponse(redirectResponse)
                let decided = await context.paused {
                    await self.observer.loadWillSend(proposed, redirectResponse: redirectResponse)
                }
                if let decided {
                    self.setCurrent(decided)
                    isRedirect = true
                }
                action = machine.redirect(decided: decided)
            case .askForCredential(let question):
                context.metrics?.setResponse(question.failureResponse)
                action = machine.credential(try await self.askDelegate(question, context: context))
            case .askCredentialStorage(let question):
                let usesStorage = await context.paused { await self.observer.loadShouldUseCredentialStorage() }
                action = machine.credentialFromStorage(
                    usesStorage ? Self.storedCredential(for: Self.protectionSpace(of: question)) : nil
                )
            case .serveRevalidated(let entry):
                if let metrics = context.metrics { metrics.setResponse(entry.makeServedResponse(now: clock.now)) }
                if let notModified = response {
                    try await self.discard(notModified.receiver, url: entry.url, context: context)
                }
                var refreshed = entry
                refreshed.varyValues = CacheRules.varyValues(for: sentRequest, headers: entry.headers)
                cache?.store(refreshed)
                try await self.deliver(entry, context: context)
                return
            case .complete(let part):
                guard let rest = response else { throw URLError.tether(.unknown, url: part.url) }
                response = nil
                let whole = try await self.completion(
                    of: part,
                    with: rest.receiver,
                    head: rest.head,
                    headers: rest.headers,
                    sent: sentRequest,
                    requestDate: requestDate,
                    context: context
                )
                action = machine.combined(whole)
            case .deliver(let request, let revalidated):
                guard let final = response else { throw URLError.tether(.unknown, url: request.url) }
                try await self.deliverFinal(
                    final.receiver,
                    head: final.head,
                    headerFields: final.headers,
                    request: request,
                    sent: sentRequest,
                    requestDate: requestDate,
                    revalidating: revalidated,
                    context: context
                )
                return
            }
        }
    }
}
