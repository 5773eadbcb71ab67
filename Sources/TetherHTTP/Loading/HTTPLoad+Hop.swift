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
    func outgoing(
        _ hop: HTTPLoadMachine.Hop,
        bodySends: inout Int,
        context: LoadContext
    ) async throws
        -> HTTPClientRequest
    {
        let request = hop.request
        var outgoing = HTTPClientRequest(url: hop.url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: hop.method)
        outgoing.tlsConfiguration = self.configuration.tlsConfiguration
        var headers = HTTPHeaders()
        for (name, value) in request.allHTTPHeaderFields ?? [:] { headers.add(name: name, value: value) }
        if request.httpShouldHandleCookies, let cookies = HTTPCookieStorage.shared.cookies(for: hop.url),
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
        if let (name, value) = hop.authorization { headers.replaceOrAdd(name: name, value: value) }
        for (name, value) in hop.conditionalHeaders { headers.add(name: name, value: value) }
        outgoing.headers = headers
        outgoing.body = try await self.makeBody(for: request, sendIndex: bodySends, headers: headers, context: context)
        if outgoing.body != nil {
            bodySends += 1
            // The engine frames the body from the length it is given; a caller's framing headers would clash.
            outgoing.headers.remove(name: "Content-Length")
            outgoing.headers.remove(name: "Transfer-Encoding")
        }
        return outgoing
    }

    /// Sends `outgoing` and returns the response's head; stores the cookies it sets.
    /// - Throws: a `URLError` (the engine's error mapped, or the reason the load was cancelled).
    func send(
        _ outgoing: HTTPClientRequest,
        for hop: HTTPLoadMachine.Hop,
        context: LoadContext
    ) async throws
        -> HTTPClientResponse
    {
        let proxy = ProxyRules.proxy(
            for: hop.url,
            explicit: self.configuration.proxy,
            usesEnvironment: self.configuration.usesEnvironmentProxy
        )
        let client = HTTPEngine.client(for: self.configuration, proxy: proxy)
        context.watchdog?.touch()
        let response: HTTPClientResponse
        do {
            response = try await StaleConnectionRetry.execute(outgoing, on: client, logger: self.configuration.logger)
        } catch {
            throw self.failure(error, url: hop.url)
        }
        context.watchdog?.touch()
        if hop.request.httpShouldHandleCookies {
            let setCookies = response.headers["Set-Cookie"]
            if !setCookies.isEmpty {
                var fields: [String: String] = [:]
                let cookies = setCookies.flatMap { value -> [HTTPCookie] in
                    fields["Set-Cookie"] = value
                    return HTTPCookie.cookies(withResponseHeaderFields: fields, for: hop.url)
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

    func discard(_ body: HTTPClientResponse.Body, url: URL, context: LoadContext) async throws {
        do {
            for try await chunk in body {
                context.watchdog?.touch()
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
