import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The decisions of one load, without I/O: whether the cache answers, which request goes out next (redirects,
/// credentials, revalidation), which response is the final one, and when a failed revalidation serves the stale
/// entry. ``HTTPLoad`` feeds it what happened and carries out the ``Action`` it returns; nothing here waits, sends
/// or reads.
struct HTTPLoadMachine {
    /// What the load does next.
    enum Action {
        /// Deliver this stored entry as the response; the load ends.
        case serve(CacheEntry)
        /// Deliver this stale entry (within its `stale-while-revalidate` window) as the response, and revalidate it
        /// in a load of its own that nobody watches; this load ends.
        case serveAndRevalidate(CacheEntry)
        /// Send this request (after reading off the previous response's body, if any).
        case send(Hop)
        /// Ask the delegate whether to follow a redirect (`willSendRequest` with the redirect response).
        case askToFollow(URLRequest, redirectResponse: HTTPURLResponse)
        /// Ask the delegate for a credential.
        case askForCredential(Challenge)
        /// Ask the delegate whether the shared credential storage may be used, then ``credentialFromStorage(_:)``.
        case askCredentialStorage(Challenge)
        /// A 304 refreshed this entry: store it and deliver it (after reading off the 304's body); the load ends.
        case serveRevalidated(CacheEntry)
        /// The `206` just received is the rest of this stored part: read it, combine, then ``combined(_:)``.
        case complete(CacheEntry)
        /// The response just received is the final one: deliver it (it answers `request`, which revalidated
        /// `revalidating`, if anything); the load ends.
        case deliver(URLRequest, revalidating: CacheEntry?)
        /// The load fails with this code.
        case fail(URLError.Code)
    }

    /// One request on the wire.
    struct Hop {
        var request: URLRequest
        var url: URL
        /// Upper case.
        var method: String
        /// `Authorization` and its value, for an active credential of this origin.
        var authorization: (name: String, value: String)?
        /// `If-None-Match` / `If-Modified-Since` of the entry being revalidated (none the request already has).
        var conditionalHeaders: [(name: String, value: String)]
    }

    /// A challenge to put to the delegate.
    struct Challenge {
        var challenge: HTTPAuthChallenge
        var url: URL
        var previousFailureCount: Int
        var failureResponse: HTTPURLResponse
    }

    private enum State {
        case idle
        /// A request is out; `stored` is the entry it revalidates.
        case sending(Hop, stored: CacheEntry?)
        /// The delegate decides about a redirect of `hop`.
        case redirecting(Hop, stored: CacheEntry?)
        /// The delegate answers a challenge to `hop`.
        case challenged(Hop, Challenge, spaceKey: String, stored: CacheEntry?)
        case finished
    }

    private var state = State.idle
    private var auth = AuthenticationState()
    private var redirects = 0
    private let maximumRedirects: Int
    /// Challenges answered with a credential in this load.
    private var authenticationRounds = 0
    /// The most challenges a load answers with a credential; the next challenge's response is delivered as it is,
    /// without asking, so that a server that challenges forever cannot keep a load going.
    static let maximumAuthenticationRounds = 10
    /// The entry a failed request may fall back to (until a response was delivered).
    private var staleFallback: CacheEntry?
    /// The URL's other variants whose entity tags a request with no entry of its own sends (RFC 9111 §4.3.1), so
    /// that a 304 can select one of them.
    private var otherVariants: [CacheEntry] = []
    /// For a `HEAD`: the stored `GET` response it may serve, or freshen with a `200` (RFC 9111 §4.3.5).
    private var headTarget: CacheEntry?
    /// The request the load started with.
    private var startRequest: URLRequest?
    /// The stored part that the request completes.
    private var completion: PartCompletion?

    /// Whether stored responses without a stated lifetime may be fresh on a heuristic.
    private let usesHeuristicFreshness: Bool

    init(maximumRedirects: Int, usesHeuristicFreshness: Bool = true) {
        self.maximumRedirects = maximumRedirects
        self.usesHeuristicFreshness = usesHeuristicFreshness
    }

    // MARK: - Events

    /// The load starts with `request` (canonical, checked, accepted by the delegate); `stored` is the cache's entry
    /// for it, if any, and `variants` every stored variant of its URL (`stored` is one of them, when there is one).
    mutating func start(
        _ request: URLRequest,
        stored: CacheEntry?,
        variants: [CacheEntry] = [],
        now: Date = Date()
    ) -> Action {
        guard case .idle = state else { preconditionFailure("a load starts once") }
        startRequest = request
        let method = HTTPLoad.method(of: request)
        let requestDirectives = CacheRules.directives(request.value(forHTTPHeaderField: "Cache-Control"))
        let asksForNoStore = requestDirectives["no-store"] != nil
        // A stored part answers only a range it holds; a request for the whole may complete it.
        let decided = PartCompletion.decide(stored, for: request, mayComplete: !asksForNoStore)
        var stored = decided.stored
        completion = decided.completion
        if method == "HEAD" { headTarget = stored }
        // What a network failure may fall back to: the stored entry, also one without validators.
        var fallback = stored
        switch request.cachePolicy {
        case .returnCacheDataDontLoad:
            guard let stored else { return finish(.fail(.resourceUnavailable)) }
            return finish(.serve(stored))
        case .returnCacheDataElseLoad:
            if let stored { return finish(.serve(stored)) }
        case .useProtocolCachePolicy where asksForNoStore:
            // A request that asks for nothing to be stored gets nothing stored either (as Firefox answers it).
            stored = nil
            fallback = nil
        case .useProtocolCachePolicy:
            let heuristics = self.usesHeuristicFreshness
            if let entry = stored,
                CacheRules.canUseWithoutRevalidation(entry, request: request, now: now, heuristics: heuristics)
            {
                return finish(.serve(CacheRules.servedWithoutRevalidation(entry)))
            }
            if let entry = stored,
                CacheRules.canServeWhileRevalidating(entry, request: request, now: now, heuristics: heuristics)
            {
                return finish(.serveAndRevalidate(CacheRules.servedWithoutRevalidation(entry)))
            }
            if let entry = stored, !entry.hasValidators { stored = nil }
        case .reloadRevalidatingCacheData:
            // A fresh `immutable` response does not change while fresh: a reload need not ask (RFC 8246).
            if let entry = stored, CacheRules.isImmutable(entry),
                CacheRules.isFresh(entry, now: now, heuristics: self.usesHeuristicFreshness)
            {
                return finish(.serve(CacheRules.servedWithoutRevalidation(entry)))
            }
            if let entry = stored, !entry.hasValidators { stored = nil }
            fallback = stored
        default:
            stored = nil
            fallback = nil
        }
        if let fallback, !CacheRules.mustRevalidate(fallback) { staleFallback = fallback }
        let revalidating: [URLRequest.CachePolicy] = [
            .useProtocolCachePolicy, .reloadRevalidatingCacheData, .returnCacheDataElseLoad,
        ]
        let revalidates = revalidating.contains(request.cachePolicy)
        // The application's own condition is left alone: its 304 is the application's.
        if stored == nil, revalidates, !asksForNoStore, request.value(forHTTPHeaderField: "If-None-Match") == nil {
            otherVariants = completion == nil ? variants.filter(CacheRules.mayValidateOtherVariants) : []
        }
        return send(request, revalidating: stored)
    }

    /// The head of the response to the current request arrived; the request was sent at `requestDate`.
    mutating func received(
        status: Int,
        headers: [String: String],
        challenges: [String],
        version: String,
        requestDate: Date,
        now: Date = Date()
    ) -> Action {
        guard case .sending(let hop, let stored) = state else { preconditionFailure("no request is out") }
        let url = hop.url
        if [301, 302, 303, 307, 308].contains(status),
            let location = headers.first(where: { HeaderLookup.namesMatch($0.key, "Location") })?.value,
            let target = URL(string: location, relativeTo: url)?.absoluteURL,
            ["http", "https"].contains(target.scheme?.lowercased() ?? "")
        {
            redirects += 1
            if redirects > maximumRedirects { return finish(.fail(.httpTooManyRedirects)) }
            state = .redirecting(hop, stored: stored)
            return .askToFollow(
                RedirectRules.request(following: hop.request, to: target, status: status),
                redirectResponse: Self.response(url, status, headers, version)
            )
        }
        // Tether's engine reaches every origin through a proxy by a CONNECT tunnel, and a proxy's 407 to the
        // CONNECT is an engine error (`.userAuthenticationRequired`): a 407 response comes from the origin, which
        // gets no proxy credential.
        if status == 407 { return finish(.fail(.badServerResponse)) }
        if status == 401, let challenge = HTTPAuthChallenge.strongest(in: challenges) {
            if authenticationRounds >= Self.maximumAuthenticationRounds {
                return finish(.deliver(hop.request, revalidating: stored))
            }
            let scheme = url.scheme?.lowercased() ?? "http"
            let port = url.port ?? (scheme == "https" ? 443 : 80)
            let spaceKey =
                "\(scheme)|\(url.host?.lowercased() ?? "")|\(port)|\(challenge.realm ?? "")|"
                + challenge.authenticationMethod
            let question = Challenge(
                challenge: challenge,
                url: url,
                previousFailureCount: auth.recordChallenge(spaceKey: spaceKey, challenge: challenge),
                failureResponse: Self.response(url, status, headers, version)
            )
            state = .challenged(hop, question, spaceKey: spaceKey, stored: stored)
            return .askForCredential(question)
        }
        // The rest of a stored part is combined by the load; a 416 says the representation is shorter now.
        if let part = completion?.part, completion?.applies(to: url) == true, status == 206 || status == 416 {
            if status == 206 { return .complete(part) }
            completion = nil
            return send(hop.request, revalidating: nil)
        }
        if status == 304, var entry = stored ?? Self.selected(by: headers, among: otherVariants) {
            entry.refresh(with: headers, requestDate: requestDate, responseDate: now)
            return finish(.serveRevalidated(entry))
        }
        if hop.method == "HEAD", status == 200, let target = headTarget {
            // A 200 to a HEAD freshens the stored GET response when it describes the same representation, and makes
            // it stale otherwise (RFC 9111 §4.3.5): the load delivers it, and the entry is removed.
            guard CacheRules.headResponse(headers, describes: target) else {
                return finish(.deliver(hop.request, revalidating: target))
            }
            var entry = target
            entry.refresh(with: headers, requestDate: requestDate, responseDate: now)
            return finish(.serveRevalidated(entry))
        }
        // `stale-if-error` (RFC 5861 §4): a stale entry may stand in for a server error.
        if (500..<600).contains(status), let stale = staleFallback, let request = startRequest,
            CacheRules.canServeOnError(stale, request: request, now: now, heuristics: self.usesHeuristicFreshness)
        {
            return finish(.serve(CacheRules.servedWithoutRevalidation(stale)))
        }
        return finish(.deliver(hop.request, revalidating: stored))
    }

    /// The variant a 304 selects among those whose entity tags the request sent: the one with the 304's `ETag`,
    /// else the only one.
    private static func selected(by headers: [String: String], among variants: [CacheEntry]) -> CacheEntry? {
        guard !variants.isEmpty else { return nil }
        guard let etag = HeaderLookup.value("ETag", in: headers) else {
            return variants.count == 1 ? variants[0] : nil
        }
        return variants.last { $0.header("ETag") == etag }
    }

    /// The `206` that completes the stored part was read: `whole` is the complete response the two make, or nil when
    /// they make none (another representation or range): then the whole is asked for again, without a range.
    mutating func combined(_ whole: CacheEntry?) -> Action {
        guard case .sending(let hop, _) = state, completion != nil else { preconditionFailure("no part completes") }
        completion = nil
        if let whole { return finish(.serveRevalidated(whole)) }
        return send(hop.request, revalidating: nil)
    }

    /// The delegate's answer about the redirect: the request to send, or nil to deliver the redirect response.
    mutating func redirect(decided request: URLRequest?) -> Action {
        guard case .redirecting(let hop, let stored) = state else { preconditionFailure("no redirect is pending") }
        guard let request else { return finish(.deliver(hop.request, revalidating: stored)) }
        guard let url = request.url else { return finish(.fail(.badURL)) }
        guard URLConnection.canHandle(request) else { return finish(.fail(.unsupportedURL)) }
        if let origin = RedirectRules.origin(of: url), origin != RedirectRules.origin(of: hop.url) {
            auth.forgetActiveCredential()
        }
        let sameResource = stored.map { CacheRules.key(for: $0.url) == CacheRules.key(for: url) } ?? false
        if CacheRules.key(for: url) != CacheRules.key(for: hop.url) {
            otherVariants = []
            headTarget = nil
            completion = nil
        }
        return send(request, revalidating: sameResource ? stored : nil)
    }

    /// The delegate's answer to the challenge.
    mutating func credential(_ disposition: URLConnection.ChallengeDisposition) -> Action {
        guard case .challenged(let hop, let question, let spaceKey, let stored) = state else {
            preconditionFailure("no challenge is pending")
        }
        switch disposition {
        case .useCredential(let credential):
            return retry(hop, question, with: credential, stored: stored)
        case .continueWithoutCredential, .rejectProtectionSpace:
            return finish(.deliver(hop.request, revalidating: stored))
        case .cancel:
            return finish(.fail(.userCancelledAuthentication))
        case .performDefaultHandling:
            if !auth.triedURLCredential.contains(spaceKey), let user = hop.url.user {
                auth.triedURLCredential.insert(spaceKey)
                let credential = URLCredential(user: user, password: hop.url.password ?? "", persistence: .none)
                return retry(hop, question, with: credential, stored: stored)
            }
            if !auth.triedStorage.contains(spaceKey) {
                auth.triedStorage.insert(spaceKey)
                return .askCredentialStorage(question)
            }
            return finish(.deliver(hop.request, revalidating: stored))
        }
    }

    /// The shared storage's credential for the challenge (nil: none, or the delegate said not to use the storage).
    mutating func credentialFromStorage(_ credential: URLCredential?) -> Action {
        guard case .challenged(let hop, let question, _, let stored) = state else {
            preconditionFailure("no challenge is pending")
        }
        guard let credential else { return finish(.deliver(hop.request, revalidating: stored)) }
        return retry(hop, question, with: credential, stored: stored)
    }

    /// The request failed on the network (`code` mapped from the engine's error) before a response was delivered.
    mutating func failed(_ code: URLError.Code) -> Action {
        let networkCodes: Set<URLError.Code> = [
            .cannotConnectToHost, .cannotFindHost, .networkConnectionLost, .notConnectedToInternet,
            .secureConnectionFailed, .dnsLookupFailed,
        ]
        // A failed revalidation serves the stale entry, unless it must be revalidated (RFC 9111 §4.2.4).
        if let stale = staleFallback, networkCodes.contains(code) {
            return finish(.serve(CacheRules.servedWithoutRevalidation(stale)))
        }
        return finish(.fail(code))
    }

    // MARK: - Steps

    private mutating func retry(
        _ hop: Hop,
        _ question: Challenge,
        with credential: URLCredential,
        stored: CacheEntry?
    ) -> Action {
        guard let user = credential.user else { return finish(.deliver(hop.request, revalidating: stored)) }
        authenticationRounds += 1
        auth.activate(
            challenge: question.challenge,
            origin: RedirectRules.origin(of: hop.url),
            user: user,
            password: credential.password ?? ""
        )
        return send(hop.request, revalidating: stored)
    }

    private mutating func send(_ request: URLRequest, revalidating stored: CacheEntry?) -> Action {
        guard let url = request.url else { return finish(.fail(.badURL)) }
        let method = HTTPLoad.method(of: request)
        var conditional: [(name: String, value: String)] = []
        if let stored {
            let has = { (name: String) in request.value(forHTTPHeaderField: name) != nil }
            if let etag = stored.header("ETag"), !has("If-None-Match") {
                conditional.append(("If-None-Match", etag))
            }
            if let modified = stored.header("Last-Modified"), !has("If-Modified-Since") {
                conditional.append(("If-Modified-Since", modified))
            }
        } else if !otherVariants.isEmpty, request.value(forHTTPHeaderField: "If-None-Match") == nil {
            let tags = otherVariants.compactMap { $0.header("ETag") }
            conditional.append(("If-None-Match", Array(Set(tags)).sorted().joined(separator: ", ")))
        }
        if let completion, completion.applies(to: url) { conditional += completion.headers }
        let authorization = auth.authorization(for: url, method: method).map { ("Authorization", $0) }
        let hop = Hop(
            request: request,
            url: url,
            method: method,
            authorization: authorization,
            conditionalHeaders: conditional
        )
        state = .sending(hop, stored: stored)
        return .send(hop)
    }

    /// Ends the load's decisions with `action` (every action that ends a load goes through here).
    private mutating func finish(_ action: Action) -> Action {
        state = .finished
        staleFallback = nil
        otherVariants = []
        headTarget = nil
        completion = nil
        return action
    }

    private static func response(
        _ url: URL,
        _ status: Int,
        _ headers: [String: String],
        _ version: String
    )
        -> HTTPURLResponse
    {
        VersionedHTTPURLResponse(url: url, statusCode: status, version: version, headerFields: headers)!
    }
}
