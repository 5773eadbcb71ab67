import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPLoad {
    /// Delivers a stored entry like a network load: the byte range a `Range` asks for
    /// (``CacheRules/answer(_:to:)``), and no body to a `HEAD`.
    func deliver(_ entry: CacheEntry, context: LoadContext) async throws {
        context.didDeliverResponse = true
        let request = self.currentRequest
        var entry = CacheRules.answer(entry, to: request)
        if Self.method(of: request) == "HEAD" { entry.body = Data() }
        let response = entry.makeServedResponse(now: self.clock.now)
        try await context.pausedThrowing { try await self.observer.loadDidReceive(response) }
        var offset = 0
        let chunkSize = 64 << 10
        while offset < entry.body.count {
            let end = min(entry.body.count, offset + chunkSize)
            let chunk = ByteBuffer(bytes: entry.body[(entry.body.startIndex + offset)..<(entry.body.startIndex + end)])
            try await context.pausedThrowing { try await self.observer.loadDidReceive(chunk) }
            offset = end
        }
    }

    /// Streams the final response to the observer and stores it in the cache when the rules allow.
    func deliverFinal(
        _ receiver: ResponseReceiver,
        head response: HTTPResponseHead,
        headerFields: [String: String],
        request: URLRequest,
        sent: URLRequest,
        requestDate: Date,
        revalidating stored: CacheEntry?,
        context: LoadContext
    ) async throws {
        guard let url = request.url else { return }
        let status = Int(response.status.code)
        let encoding = response.headers.first(name: "Content-Encoding")?.lowercased() ?? ""
        // A caller's own engine decodes bodies or not by its own settings, which Tether cannot read: its bodies are
        // delivered as it gives them, with their headers, and not stored when they have a content coding.
        let ownEngine = self.configuration.httpClient != nil
        let decompressed =
            !ownEngine && self.configuration.decompressesResponses
            && ["gzip", "x-gzip", "deflate"].contains(encoding)
        let httpResponse = Self.makeResponse(
            url: url,
            status: status,
            headers: headerFields,
            decompressed: decompressed,
            version: response.version
        )
        context.didDeliverResponse = true
        context.metrics?.setResponse(httpResponse)
        try await context.pausedThrowing { try await self.observer.loadDidReceive(httpResponse) }

        let cache = self.configuration.responseCache
        // The credentials a shared cache minds: the request's own headers and the `Authorization` a challenge added.
        // The cookies Tether adds come from the process's one cookie storage, the same for every load.
        var credentialed = request
        if let authorization = sent.value(forHTTPHeaderField: "Authorization") {
            credentialed.setValue(authorization, forHTTPHeaderField: "Authorization")
        }
        let storable =
            cache != nil && !(ownEngine && !encoding.isEmpty && encoding != "identity")
            && CacheRules.isStorable(
                request: credentialed,
                statusCode: status,
                headers: headerFields,
                isShared: cache?.isPrivate == false
            )
        var cacheBuffer: Data? = storable ? Data() : nil
        let cacheLimit = cache?.maximumEntrySize ?? 0
        do {
            while let chunk = try await receiver.next() {
                context.metrics?.receivedBody(chunk.readableBytes)
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
        context.metrics?.responseEnded()
        if let code = self.cancelCode { throw URLError.tether(code, url: url) }

        guard let cache else { return }
        // An unsafe request's response invalidated its entries when it arrived (``invalidate(_:after:status:headers:)``);
        // only a POST's that says it answers later GETs is stored.
        if !Self.safeMethods.contains(Self.method(of: request)), !storable { return }
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
                        responseDate: self.clock.now,
                        varyValues: CacheRules.varyValues(for: sent, headers: finalHeaders),
                        storagePolicy: Int(decided.storagePolicy.rawValue),
                        httpVersion: decidedResponse.httpVersion
                    )
                )
            } else if stored != nil {
                cache.removeCachedResponse(for: request)
            }
        } else if stored != nil {
            cache.removeCachedResponse(for: request)
        }
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
