import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPLoad {
    /// The methods that change nothing on the server (RFC 9110 §9.2.1): their responses invalidate no cache entry.
    static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]

    /// `request` as `hop` sent it, from the engine request's headers: the cookies and the credential Tether added.
    static func requestAsSent(
        _ request: URLRequest,
        outgoing headers: HTTPHeaders,
        hop: HTTPLoadMachine.Hop
    ) -> URLRequest {
        var sent = request
        let cookies = headers["Cookie"]
        sent.setValue(cookies.isEmpty ? nil : cookies.joined(separator: "; "), forHTTPHeaderField: "Cookie")
        if let (name, value) = hop.authorization { sent.setValue(value, forHTTPHeaderField: name) }
        return sent
    }

    /// Invalidates what a non-error response to an unsafe request makes stale (RFC 9111 §4.4): the request's URL
    /// and the same-origin URLs in `Location` and `Content-Location`. Done for every hop, so that an unsafe request
    /// whose redirect is followed (a POST answered with 303) invalidates as much as one that is not.
    static func invalidate(
        _ cache: HTTPResponseCache,
        after hop: HTTPLoadMachine.Hop,
        status: Int,
        headers: [String: String]
    ) {
        guard !Self.safeMethods.contains(hop.method), status < 400 else { return }
        cache.remove(key: CacheRules.key(for: hop.url))
        for target in CacheRules.invalidatedURLs(after: hop.url, headers: headers) {
            cache.remove(key: CacheRules.key(for: target))
        }
    }

    /// Reads the `206` that completes the stored part `part` (RFC 9111 §3.4) and combines the two
    /// (``CacheRules/combine(_:with:)``): the whole response, or nil when they do not make it (another
    /// representation, another range, more bytes than the representation has). The body is read to its end either way.
    func completion(
        of part: CacheEntry,
        with receiver: ResponseReceiver,
        head: HTTPResponseHead,
        headers: [String: String],
        sent: URLRequest,
        requestDate: Date,
        context: LoadContext
    ) async throws -> CacheEntry? {
        let limit = StoredPart(part)?.length ?? 0
        var body: Data? = Data()
        do {
            while let chunk = try await receiver.next() {
                context.metrics?.receivedBody(chunk.readableBytes)
                if let count = body?.count, count + chunk.readableBytes <= limit {
                    body?.append(contentsOf: chunk.readableBytesView)
                } else {
                    body = nil
                }
            }
            context.metrics?.responseEnded()
        } catch {
            throw self.failure(error, url: part.url)
        }
        if let code = self.cancelCode { throw URLError.tether(code, url: part.url) }
        guard let body else { return nil }
        let rest = CacheEntry(
            url: part.url,
            statusCode: 206,
            headers: headers,
            body: body,
            requestDate: requestDate,
            responseDate: self.clock.now,
            varyValues: CacheRules.varyValues(for: sent, headers: headers),
            storagePolicy: part.storagePolicy,
            httpVersion: VersionedHTTPURLResponse.versionString(
                major: head.version.major,
                minor: head.version.minor
            )
        )
        guard let whole = CacheRules.combine(part, with: rest), whole.statusCode == 200 else { return nil }
        return whole
    }
}
