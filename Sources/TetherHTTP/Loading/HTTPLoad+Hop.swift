import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import TetherConcurrency

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPLoad {
    /// The engine's request for `hop`: its headers, the cookies of the shared storage, the active credential, the
    /// revalidation's conditions and the body.
    /// - Throws: a `URLError` (a URL the engine cannot send to, or the request body's failure).
    func outgoing(
        _ hop: HTTPLoadMachine.Hop,
        bodySends: inout Int,
        context: LoadContext
    ) async throws
        -> HTTPClient.Request
    {
        let request = hop.request
        var headers = HTTPHeaders()
        for (name, value) in request.allHTTPHeaderFields ?? [:] { headers.add(name: name, value: value) }
        if let cookie = Self.storedCookieHeader(for: request, url: hop.url) {
            if let existing = headers.first(name: "Cookie") {
                headers.replaceOrAdd(name: "Cookie", value: existing + "; " + cookie)
            } else {
                headers.add(name: "Cookie", value: cookie)
            }
        }
        if let (name, value) = hop.authorization { headers.replaceOrAdd(name: name, value: value) }
        for (name, value) in hop.conditionalHeaders { headers.add(name: name, value: value) }
        let body = try await self.makeBody(for: request, sendIndex: bodySends, headers: headers, context: context)
        if body != nil {
            bodySends += 1
            // The engine frames the body from the length it is given; a caller's framing headers would clash.
            headers.remove(name: "Content-Length")
            headers.remove(name: "Transfer-Encoding")
        }
        do {
            return try HTTPClient.Request(
                url: hop.url,
                method: HTTPMethod(rawValue: hop.method),
                headers: headers,
                body: body,
                tlsConfiguration: self.configuration.tlsConfiguration
            )
        } catch {
            throw self.failure(error, url: hop.url)
        }
    }

    /// The `Cookie` value Tether adds to `request` for `url` from the shared storage, as RFC 6265 §5.4 chooses them
    /// (``CookieRules``); nil when the request does not handle cookies or none applies.
    static func storedCookieHeader(for request: URLRequest, url: URL) -> String? {
        guard request.httpShouldHandleCookies, let stored = HTTPCookieStorage.shared.cookies(for: url),
            !stored.isEmpty
        else { return nil }
        let cookies = CookieRules().cookies(stored, for: url)
        guard !cookies.isEmpty else { return nil }
        return cookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// `request` as it goes on the wire to `url` (RFC 9111 §4.1 matches `Vary` against it): with the cookies Tether
    /// adds from the shared storage and the credential header it adds for a challenge.
    static func requestAsSent(
        _ request: URLRequest,
        url: URL,
        authorization: (name: String, value: String)? = nil
    ) -> URLRequest {
        var sent = request
        if let cookie = Self.storedCookieHeader(for: request, url: url) {
            let existing = request.value(forHTTPHeaderField: "Cookie")
            sent.setValue(existing.map { $0 + "; " + cookie } ?? cookie, forHTTPHeaderField: "Cookie")
        }
        if let (name, value) = authorization { sent.setValue(value, forHTTPHeaderField: name) }
        return sent
    }

    /// Sends `outgoing` and returns the receiver of its response, with the response's head; stores the cookies it
    /// sets.
    /// - Throws: a `URLError` (the engine's error mapped, or the reason the load was cancelled).
    func send(
        _ outgoing: HTTPClient.Request,
        for hop: HTTPLoadMachine.Hop,
        context: LoadContext
    ) async throws
        -> (receiver: ResponseReceiver, head: HTTPResponseHead)
    {
        let proxy = try ProxyRules.proxy(
            for: hop.url,
            explicit: self.configuration.proxy,
            usesEnvironment: self.configuration.usesEnvironmentProxy
        )
        let client = HTTPEngine.client(for: self.configuration, proxy: proxy)
        context.watchdog?.touch()
        let response: (receiver: ResponseReceiver, head: HTTPResponseHead)
        do {
            response = try await StaleConnectionRetry.execute(
                outgoing,
                logger: self.configuration.logger,
                isStopped: { self.cancelCode != nil },
                attempt: { () async throws -> (receiver: ResponseReceiver, head: HTTPResponseHead) in
                    let receiver = ResponseReceiver(watchdog: context.watchdog)
                    if let code = self.install(receiver) { throw URLError.tether(code, url: hop.url) }
                    receiver.start(outgoing, on: client, logger: self.configuration.logger)
                    return (receiver, try await receiver.head())
                }
            )
        } catch {
            throw self.failure(error, url: hop.url)
        }
        if hop.request.httpShouldHandleCookies {
            let setCookies = response.head.headers["Set-Cookie"]
            if !setCookies.isEmpty {
                let rules = CookieRules()
                let cookies = setCookies.flatMap { line -> [HTTPCookie] in
                    HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": line], for: hop.url).compactMap {
                        rules.cookieToStore($0, from: hop.url, line: line)
                    }
                }
                await Self.store(cookies, for: hop.url, mainDocumentURL: hop.request.mainDocumentURL)
            }
        }
        return response
    }

    /// Stores cookies in the shared storage, which may write them to disk: off the event loop when the load runs on
    /// one (the storage is done before the next hop's request reads it).
    static func store(_ cookies: [HTTPCookie], for url: URL, mainDocumentURL: URL?) async {
        guard !cookies.isEmpty else { return }
        if let pause = Self.cookieStoreWillStart.withLock({ $0 }) { await pause(url) }
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

    static let cookieQueue = DispatchQueue(label: "tether.http.cookies")

    /// For tests only (nil otherwise): awaited with the response's URL before its cookies are stored, between the head
    /// and the body, so that a test can hold one load there without holding every other load's cookies.
    static let cookieStoreWillStart = LockedBox<(@Sendable (URL) async -> Void)?>(nil)

    /// Reads off the rest of a response the load does not deliver (a redirect's, a challenge's, a 304's).
    func discard(_ receiver: ResponseReceiver, url: URL, context: LoadContext) async throws {
        do {
            while let chunk = try await receiver.next() {
                context.metrics?.receivedBody(chunk.readableBytes)
            }
            context.metrics?.responseEnded()
        } catch {
            throw self.failure(error, url: url)
        }
    }

    func failure(_ error: any Error, url: URL) -> URLError {
        if let code = self.cancelCode { return .tether(code, url: url) }
        return URLErrorMapping.map(error, url: url)
    }

}
