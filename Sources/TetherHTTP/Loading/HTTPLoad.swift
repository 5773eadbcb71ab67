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
/// Runs in its own task (``start()``), or in its caller's (``runInline()``, for `data(for:)`); every event goes to
/// the observer, in order. ``cancel(_:)`` stops the engine request
/// and records why, so that the error reported (if anyone still listens) says it.
final class HTTPLoad: Sendable {
    struct State {
        var task: Task<Void, Never>?
        var cancelCode: URLError.Code?
        var currentRequest: URLRequest
        var sender: ChallengeSender?
        var isStarted = false
        /// Set for a load run in its caller's task (``runInline()``): the engine's own timeouts replace the
        /// watchdog.
        var inlineEngine: HTTPClient?
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

    /// Prepares a load to run in the caller's task, saving the hops to a task of its own and back: possible for a
    /// request without a body (nothing to upload, so the engine's idle-read and connect timeouts measure what the
    /// watchdog would) when an engine with its `timeoutInterval` exists or may be made. False: use ``start()``.
    func prepareInline() -> Bool {
        let interval = self.originalRequest.timeoutInterval
        guard self.originalRequest.httpBody == nil, self.originalRequest.httpBodyStream == nil, interval > 0,
            interval.isFinite,
            let client = HTTPEngine.client(
                eventLoopGroup: self.configuration.eventLoopGroup,
                tlsConfiguration: self.configuration.tlsConfiguration,
                decompressionLimit: self.configuration.decompressionLimit,
                idleTimeout: .nanoseconds(Int64(min(interval, 365 * 86_400) * 1e9))
            )
        else { return false }
        self.state.withLock { $0.inlineEngine = client }
        return true
    }

    /// Runs a load prepared by ``prepareInline()`` in the calling task; the caller's cancellation cancels it.
    func runInline() async {
        let shouldStart = self.state.withLock { state -> Bool in
            if state.isStarted { return false }
            state.isStarted = true
            return true
        }
        guard shouldStart else { return }
        self.prepareCookieStorage()
        await self.run()
    }

    /// The shared cookie storage reads its file the first time it is used: that happens here, on the thread that
    /// starts the load, not on the event loop where a load's steps may run.
    private func prepareCookieStorage() {
        if self.originalRequest.httpShouldHandleCookies { _ = HTTPCookieStorage.shared }
    }

    /// Stops the load; the first reason wins.
    func cancel(_ code: URLError.Code = .cancelled) {
        let (task, sender) = self.state.withLock { state -> (Task<Void, Never>?, ChallengeSender?) in
            if state.cancelCode == nil { state.cancelCode = code }
            return (state.task, state.sender)
        }
        sender?.answer(.cancel)
        task?.cancel()
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
        let isInline = self.state.withLock { $0.inlineEngine != nil }
        let watchdog =
            isInline
            ? nil
            : IdleWatchdog(
                timeoutInterval: self.originalRequest.timeoutInterval,
                onFire: { [weak self] in self?.cancel(.timedOut) }
            )
        let context = LoadContext(watchdog: watchdog)
        self.setCurrent(request)
        watchdog?.start()
        do {
            guard let url = request.url else { throw URLError.tether(.badURL, url: nil) }
            guard URLConnection.canHandle(request) else { throw URLError.tether(.unsupportedURL, url: url) }
            try await self.perform(request, context: context)
            watchdog?.stop()
            if let code = self.cancelCode { throw URLError.tether(code, url: self.currentRequest.url) }
            await self.observer.loadDidFinish()
        } catch {
            watchdog?.stop()
            let url = self.currentRequest.url
            let mapped: URLError
            if let code = self.cancelCode {
                mapped = .tether(code, url: url, underlying: (error as? URLError)?.code == code ? nil : error)
            } else {
                mapped = URLErrorMapping.map(error, url: url)
            }
            self.configuration.logger?.debug("load failed", metadata: ["url": "\(url?.absoluteString ?? "-")"])
            await self.observer.loadDidFail(mapped)
        }
    }

    static func canonicalize(_ request: URLRequest) -> URLRequest {
        if let url = request.url, Self.isCanonical(url.absoluteString) { return request }
        var request = request
        if let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: true) {
            components.scheme = components.scheme?.lowercased()
            components.host = components.host?.lowercased()
            if components.path.isEmpty { components.path = "/" }
            if let canonical = components.url, canonical != url { request.url = canonical }
        }
        return request
    }

    /// True when `string` already has a lowercase scheme and host and a path (`http://host[:port]/...`): the
    /// common case skips a parse with `URLComponents`. Anything else (user info, uppercase, no path) is left to it.
    static func isCanonical(_ string: String) -> Bool {
        var string = string
        return string.withUTF8 { Self.isCanonical(bytes: UnsafeBufferPointer(rebasing: $0.prefix(2048))) }
    }

    private static func isCanonical(bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        // Scheme: lowercase letters up to "://".
        while index < bytes.count, bytes[index] >= 0x61, bytes[index] <= 0x7A { index += 1 }
        guard index > 0, index + 2 < bytes.count, bytes[index] == 0x3A, bytes[index + 1] == 0x2F,
            bytes[index + 2] == 0x2F
        else { return false }
        index += 3
        // Authority: no uppercase letter, no user info, no percent-encoding; it must end with "/" (a path).
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x2F { break }
            if byte == 0x3F || byte == 0x23 || byte == 0x40 || byte == 0x25 || (byte >= 0x41 && byte <= 0x5A) {
                return false
            }
            index += 1
        }
        return index > start && index < bytes.count
    }

    private func perform(_ request: URLRequest, context: LoadContext) async throws {
        let cache = self.configuration.responseCache
        let isGET = Self.method(of: request) == "GET"
        var stored: CacheEntry? = (cache != nil && isGET) ? cache?.entry(for: request) : nil
        switch request.cachePolicy {
        case .returnCacheDataDontLoad:
            guard let stored else { throw URLError.tether(.resourceUnavailable, url: request.url) }
            try await self.deliver(stored, context: context)
            return
        case .returnCacheDataElseLoad:
            if let stored {
                try await self.deliver(stored, context: context)
                return
            }
        case .useProtocolCachePolicy:
            if let entry = stored, CacheRules.canUseWithoutRevalidation(entry, request: request) {
                try await self.deliver(entry, context: context)
                return
            }
            if let entry = stored, !entry.hasValidators { stored = nil }
        case .reloadRevalidatingCacheData:
            if let entry = stored, !entry.hasValidators { stored = nil }
        default:
            stored = nil
        }
        do {
            try await self.network(request, revalidating: stored, context: context)
        } catch {
            // A failed revalidation serves the stale entry, unless it must be revalidated (RFC 9111 §4.2.4).
            let networkCodes: Set<URLError.Code> = [
                .cannotConnectToHost, .cannotFindHost, .networkConnectionLost, .notConnectedToInternet,
                .secureConnectionFailed, .dnsLookupFailed,
            ]
            guard let stored, !context.didDeliverResponse, self.cancelCode == nil, !CacheRules.mustRevalidate(stored),
                let urlError = error as? URLError, networkCodes.contains(urlError.code)
            else { throw error }
            try await self.deliver(stored, context: context)
        }
    }

    /// Delivers a stored entry like a network load.
    private func deliver(_ entry: CacheEntry, context: LoadContext) async throws {
        context.didDeliverResponse = true
        try await context.pausedThrowing { try await self.observer.loadDidReceive(entry.makeResponse()) }
        var offset = 0
        let chunkSize = 64 << 10
        while offset < entry.body.count {
            let end = min(entry.body.count, offset + chunkSize)
            let chunk = ByteBuffer(bytes: entry.body[(entry.body.startIndex + offset)..<(entry.body.startIndex + end)])
            try await context.pausedThrowing { try await self.observer.loadDidReceive(chunk) }
            offset = end
        }
    }

    private func network(
        _ request: URLRequest,
        revalidating initialStored: CacheEntry?,
        context: LoadContext
    )
        async throws
    {
        let inline = self.state.withLock { $0.inlineEngine }
        guard
            let client = inline
                ?? HTTPEngine.client(
                    eventLoopGroup: self.configuration.eventLoopGroup,
                    tlsConfiguration: self.configuration.tlsConfiguration,
                    decompressionLimit: self.configuration.decompressionLimit
                )
        else { throw URLError.tether(.unknown, url: request.url) }
        var current = request
        var stored = initialStored
        var redirects = 0
        var auth = AuthenticationState()
        var bodySends = 0
        // `run` checked the first request; a redirect's target is checked when it becomes current.
        var isChecked = true
        while true {
            guard let url = current.url else { throw URLError.tether(.badURL, url: nil) }
            if !isChecked {
                guard URLConnection.canHandle(current) else { throw URLError.tether(.unsupportedURL, url: url) }
                isChecked = true
            }
            if let code = self.cancelCode { throw URLError.tether(code, url: url) }
            let method = Self.method(of: current)

            var outgoing = HTTPClientRequest(url: url.absoluteString)
            outgoing.method = HTTPMethod(rawValue: method)
            var headers = HTTPHeaders()
            for (name, value) in current.allHTTPHeaderFields ?? [:] { headers.add(name: name, value: value) }
            if current.httpShouldHandleCookies, let cookies = HTTPCookieStorage.shared.cookies(for: url),
                !cookies.isEmpty
            {
                for (name, value) in HTTPCookie.requestHeaderFields(with: cookies) {
                    if let existing = headers.first(name: name) {
                        headers.replaceOrAdd(name: name, value: existing + "; " + value)
                    } else {
                        headers.add(name: name, value: value)
                    }
                }
            }
            if let value = auth.authorization(for: url, method: method) {
                headers.replaceOrAdd(name: auth.headerName, value: value)
            }
            let requestDate = Date()
            if let entry = stored, CacheRules.key(for: entry.url) == CacheRules.key(for: url) {
                if let etag = entry.header("ETag"), !headers.contains(name: "If-None-Match") {
                    headers.add(name: "If-None-Match", value: etag)
                }
                if let modified = entry.header("Last-Modified"), !headers.contains(name: "If-Modified-Since") {
                    headers.add(name: "If-Modified-Since", value: modified)
                }
            } else {
                stored = nil
            }
            outgoing.headers = headers
            outgoing.body = try await self.makeBody(
                for: current,
                sendIndex: bodySends,
                headers: headers,
                context: context
            )
            if outgoing.body != nil {
                bodySends += 1
                // The engine frames the body from the length it is given; a caller's framing headers would clash.
                outgoing.headers.remove(name: "Content-Length")
                outgoing.headers.remove(name: "Transfer-Encoding")
            }

            context.watchdog?.touch()
            let response: HTTPClientResponse
            do {
                response = try await StaleConnectionRetry.execute(
                    outgoing,
                    on: client,
                    logger: self.configuration.logger
                )
            } catch {
                throw self.failure(error, url: url)
            }
            context.watchdog?.touch()

            let headerFields = Self.headerDictionary(response.headers)
            if current.httpShouldHandleCookies {
                let setCookies = response.headers["Set-Cookie"]
                if !setCookies.isEmpty {
                    var fields: [String: String] = [:]
                    let cookies = setCookies.flatMap { value -> [HTTPCookie] in
                        fields["Set-Cookie"] = value
                        return HTTPCookie.cookies(withResponseHeaderFields: fields, for: url)
                    }
                    await Self.store(cookies, for: url, mainDocumentURL: current.mainDocumentURL)
                }
            }
            let status = Int(response.status.code)

            // Redirects: the delegate sees every hop.
            if [301, 302, 303, 307, 308].contains(status), let location = response.headers.first(name: "Location"),
                let target = URL(string: location, relativeTo: url)?.absoluteURL,
                ["http", "https"].contains(target.scheme?.lowercased() ?? "")
            {
                redirects += 1
                if redirects > self.configuration.maximumRedirects {
                    throw URLError.tether(.httpTooManyRedirects, url: url)
                }
                let redirectResponse = Self.makeResponse(
                    url: url,
                    status: status,
                    headers: headerFields,
                    decompressed: false,
                    version: response.version
                )
                let proposed = RedirectRules.request(following: current, to: target, status: status)
                let decided = await context.paused {
                    await self.observer.loadWillSend(proposed, redirectResponse: redirectResponse)
                }
                if let decided {
                    try await self.discard(response.body, url: url, context: context)
                    if let origin = RedirectRules.origin(of: target), origin != RedirectRules.origin(of: url) {
                        auth.forgetActiveCredential()
                    }
                    current = decided
                    isChecked = false
                    self.setCurrent(current)
                    continue
                }
                try await self.deliverFinal(
                    response,
                    headerFields: headerFields,
                    request: current,
                    requestDate: requestDate,
                    revalidating: stored,
                    context: context
                )
                return
            }

            // Challenges: Basic and Digest.
            if status == 401 || status == 407 {
                let challengeHeader = status == 401 ? "WWW-Authenticate" : "Proxy-Authenticate"
                if let challenge = HTTPAuthChallenge.strongest(in: response.headers[challengeHeader]) {
                    let failureResponse = Self.makeResponse(
                        url: url,
                        status: status,
                        headers: headerFields,
                        decompressed: false,
                        version: response.version
                    )
                    let retry = try await self.answer(
                        challenge,
                        isProxy: status == 407,
                        url: url,
                        failureResponse: failureResponse,
                        auth: &auth,
                        context: context
                    )
                    if retry {
                        try await self.discard(response.body, url: url, context: context)
                        continue
                    }
                }
            }

            // Revalidation answered "not modified": refresh and deliver the stored entry.
            if status == 304, var entry = stored {
                try await self.discard(response.body, url: url, context: context)
                entry.refresh(with: headerFields, requestDate: requestDate, responseDate: Date())
                self.configuration.responseCache?.store(entry)
                try await self.deliver(entry, context: context)
                return
            }

            try await self.deliverFinal(
                response,
                headerFields: headerFields,
                request: current,
                requestDate: requestDate,
                revalidating: stored,
                context: context
            )
            return
        }
    }

    /// Stores cookies in the shared storage, which may write them to disk: off the event loop when the load runs on
    /// one (the storage is done before the next hop's request reads it).
    private static func store(_ cookies: [HTTPCookie], for url: URL, mainDocumentURL: URL?) async {
        guard !cookies.isEmpty else { return }
        guard MultiThreadedEventLoopGroup.currentEventLoop != nil else {
            HTTPCookieStorage.shared.setCookies(cookies, for: url, mainDocumentURL: mainDocumentURL)
            return
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Self.cookieQueue.async {
                HTTPCookieStorage.shared.setCookies(cookies, for: url, mainDocumentURL: mainDocumentURL)
                continuation.resume()
            }
        }
    }

    private static let cookieQueue = DispatchQueue(label: "tether.http.cookies")

    /// Streams the final response to the observer and stores it in the cache when the rules allow.
    private func deliverFinal(
        _ response: HTTPClientResponse,
        headerFields: [String: String],
        request: URLRequest,
        requestDate: Date,
        revalidating stored: CacheEntry?,
        context: LoadContext
    ) async throws {
        guard let url = request.url else { return }
        let status = Int(response.status.code)
        let encoding = response.headers.first(name: "Content-Encoding")?.lowercased() ?? ""
        let decompressed =
            self.configuration.decompressesResponses && ["gzip", "x-gzip", "deflate"].contains(encoding)
        let httpResponse = Self.makeResponse(
            url: url,
            status: status,
            headers: headerFields,
            decompressed: decompressed,
            version: response.version
        )
        context.didDeliverResponse = true
        try await context.pausedThrowing { try await self.observer.loadDidReceive(httpResponse) }

        let cache = self.configuration.responseCache
        let storable =
            cache != nil && CacheRules.isStorable(request: request, statusCode: status, headers: headerFields)
        var cacheBuffer: Data? = storable ? Data() : nil
        let cacheLimit = cache?.maximumEntrySize ?? 0
        do {
            for try await chunk in response.body {
                context.watchdog?.touch()
                if cacheBuffer != nil {
                    if cacheBuffer!.count + chunk.readableBytes > cacheLimit {
                        cacheBuffer = nil
                    } else {
                        cacheBuffer!.append(contentsOf: chunk.readableBytesView)
                    }
                }
                try await context.pausedThrowing { try await self.observer.loadDidReceive(chunk) }
            }
        } catch let error as URLError {
            throw error
        } catch {
            throw self.failure(error, url: url)
        }
        if let code = self.cancelCode { throw URLError.tether(code, url: url) }

        guard let cache else { return }
        let method = Self.method(of: request)
        if !["GET", "HEAD", "OPTIONS", "TRACE"].contains(method), status < 400 {
            cache.removeCachedResponse(for: request)
            return
        }
        if storable, let body = cacheBuffer {
            var storedHeaders = headerFields
            if decompressed {
                // The stored body is the decoded one.
                for name in ["Content-Encoding", "Content-Length"] {
                    if let key = storedHeaders.keys.first(where: { HeaderLookup.namesMatch($0, name) }) {
                        storedHeaders.removeValue(forKey: key)
                    }
                }
            }
            let proposed = CachedURLResponse(
                response: Self.makeResponse(
                    url: url,
                    status: status,
                    headers: storedHeaders,
                    decompressed: false,
                    version: response.version
                ),
                data: body,
                userInfo: nil,
                storagePolicy: .allowed
            )
            let decided = await context.paused { await self.observer.loadWillCache(proposed) }
            if let decided, decided.storagePolicy != .notAllowed,
                let decidedResponse = decided.response as? HTTPURLResponse
            {
                var finalHeaders: [String: String] = [:]
                for case (let name as String, let value as String) in decidedResponse.allHeaderFields {
                    finalHeaders[name] = value
                }
                cache.store(
                    CacheEntry(
                        url: url,
                        statusCode: decidedResponse.statusCode,
                        headers: finalHeaders,
                        body: decided.data,
                        requestDate: requestDate,
                        responseDate: Date(),
                        varyValues: CacheRules.varyValues(for: request, headers: finalHeaders),
                        storagePolicy: Int(decided.storagePolicy.rawValue),
                        httpVersion: decidedResponse.httpVersion
                    ),
                    allowsDisk: decided.storagePolicy == .allowed
                )
            } else if stored != nil {
                cache.removeCachedResponse(for: request)
            }
        } else if stored != nil {
            cache.removeCachedResponse(for: request)
        }
    }

    private func discard(_ body: HTTPClientResponse.Body, url: URL, context: LoadContext) async throws {
        do {
            for try await _ in body { context.watchdog?.touch() }
        } catch {
            throw self.failure(error, url: url)
        }
    }

    private func failure(_ error: any Error, url: URL) -> URLError {
        if let code = self.cancelCode { return .tether(code, url: url) }
        return URLErrorMapping.map(error, url: url)
    }

    // MARK: - Helpers

    /// The request's method in upper case (methods are case-sensitive on the wire; Foundation's are matched
    /// without case), without making a new string when it already is.
    static func method(of request: URLRequest) -> String {
        guard let method = request.httpMethod else { return "GET" }
        return method.utf8.contains(where: { $0 >= 0x61 && $0 <= 0x7A }) ? method.uppercased() : method
    }

    static func headerDictionary(_ headers: HTTPHeaders) -> [String: String] {
        var result: [String: String] = [:]
        result.reserveCapacity(headers.count)
        for (name, value) in headers {
            if let existing = result.keys.first(where: { HeaderLookup.namesMatch($0, name) }) {
                result[existing] = result[existing]! + ", " + value
            } else {
                result[name] = value
            }
        }
        return result
    }

    static func makeResponse(
        url: URL,
        status: Int,
        headers: [String: String],
        decompressed: Bool,
        version: HTTPVersion
    ) -> HTTPURLResponse {
        var headers = headers
        if decompressed,
            let key = headers.keys.first(where: { HeaderLookup.namesMatch($0, "Content-Length") })
        {
            // The delivered body is the decoded one: its length is unknown (expectedContentLength −1).
            headers.removeValue(forKey: key)
        }
        let text = VersionedHTTPURLResponse.versionString(major: version.major, minor: version.minor)
        return VersionedHTTPURLResponse(url: url, statusCode: status, version: text, headerFields: headers)!
    }
}
