public import Foundation
import TetherConcurrency

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// The base delegate of a ``URLConnection``: failure, credential storage and authentication challenges.
///
/// Every method is optional. The connection calls its delegate only on the delivery target chosen before
/// ``URLConnection/start()`` (an `OperationQueue` or run loops), one call at a time, in order.
public protocol URLConnectionDelegate: AnyObject {
    /// Tells the delegate that the load failed. This is the last message the delegate receives.
    ///
    /// - Parameters:
    ///   - connection: The connection that failed.
    ///   - error: A `URLError` with the failing URL attached.
    func connection(_ connection: URLConnection, didFailWithError error: any Error)

    /// Asks whether the connection may consult `URLCredentialStorage.shared` when it answers a challenge by
    /// default handling.
    ///
    /// - Parameter connection: The asking connection.
    /// - Returns: `true` (the default) to use the shared credential storage.
    func connectionShouldUseCredentialStorage(_ connection: URLConnection) -> Bool

    /// Tells the delegate that the server asks for credentials (HTTP Basic or Digest).
    ///
    /// Answer exactly once, now or later, from any thread, through `challenge.sender` or
    /// ``URLConnection/answer(_:with:)``. The default implementation performs default handling.
    ///
    /// - Parameters:
    ///   - connection: The connection that received the challenge.
    ///   - challenge: The challenge, with its protection space, failure count and failure response.
    func connection(_ connection: URLConnection, willSendRequestFor challenge: URLAuthenticationChallenge)
}

/// The data delegate of a ``URLConnection``: redirects, the response, the streamed body, upload progress and
/// caching. Every method is optional.
public protocol URLConnectionDataDelegate: URLConnectionDelegate {
    /// Tells the delegate that the connection will send a request: once with a `nil` redirect response for
    /// canonicalisation, then once per redirect.
    ///
    /// - Parameters:
    ///   - connection: The loading connection.
    ///   - request: The proposed request.
    ///   - response: The 3xx response that causes a redirect, or `nil` for canonicalisation.
    /// - Returns: The request to send (the default returns `request`); `nil` on a redirect delivers the 3xx
    ///   response and its body, `nil` for canonicalisation cancels the load silently.
    func connection(
        _ connection: URLConnection,
        willSend request: URLRequest,
        redirectResponse response: URLResponse?
    ) -> URLRequest?

    /// Tells the delegate that the final response arrived. Called once per load.
    ///
    /// - Parameters:
    ///   - connection: The loading connection.
    ///   - response: The `HTTPURLResponse`.
    func connection(_ connection: URLConnection, didReceive response: URLResponse)

    /// Hands the delegate the next chunk of the body.
    ///
    /// - Parameters:
    ///   - connection: The loading connection.
    ///   - data: The next bytes of the (decompressed) body.
    func connection(_ connection: URLConnection, didReceive data: Data)

    /// Asks for a new, unopened body stream with the same content, when a stream body must be sent again
    /// (a 307/308 redirect or an authentication retry).
    ///
    /// - Parameters:
    ///   - connection: The loading connection.
    ///   - request: The request that needs the body again.
    /// - Returns: A new stream, or `nil` (the default) to fail the load.
    func connection(_ connection: URLConnection, needNewBodyStream request: URLRequest) -> InputStream?

    /// Reports upload progress. Called at least once for a non-empty body; the last call has
    /// `totalBytesWritten` equal to the body length.
    ///
    /// - Parameters:
    ///   - connection: The loading connection.
    ///   - bytesWritten: Bytes written since the previous call.
    ///   - totalBytesWritten: Bytes written so far.
    ///   - totalBytesExpectedToWrite: The body length, or -1 when unknown.
    func connection(
        _ connection: URLConnection,
        didSendBodyData bytesWritten: Int,
        totalBytesWritten: Int,
        totalBytesExpectedToWrite: Int
    )

    /// Asks the delegate before a response is stored in the response cache.
    ///
    /// - Parameters:
    ///   - connection: The loading connection.
    ///   - cachedResponse: The entry about to be stored.
    /// - Returns: The entry to store (the default returns `cachedResponse`), or `nil` to store nothing.
    func connection(
        _ connection: URLConnection,
        willCacheResponse cachedResponse: CachedURLResponse
    ) -> CachedURLResponse?

    /// Tells the delegate that the load finished. This is the last message the delegate receives.
    ///
    /// - Parameter connection: The finished connection.
    func connectionDidFinishLoading(_ connection: URLConnection)
}

extension URLConnectionDelegate {
    /// Default: does nothing.
    public func connection(_ connection: URLConnection, didFailWithError error: any Error) {}

    /// Default: `true`.
    public func connectionShouldUseCredentialStorage(_ connection: URLConnection) -> Bool { true }

    /// Default: answers the challenge with default handling.
    public func connection(_ connection: URLConnection, willSendRequestFor challenge: URLAuthenticationChallenge) {
        connection.answer(challenge, with: .performDefaultHandling)
    }
}

extension URLConnectionDataDelegate {
    /// Default: returns `request` unchanged.
    public func connection(
        _ connection: URLConnection,
        willSend request: URLRequest,
        redirectResponse response: URLResponse?
    ) -> URLRequest? {
        DefaultWillSend.note(type(of: self))
        return request
    }

    /// Default: does nothing.
    public func connection(_ connection: URLConnection, didReceive response: URLResponse) {}

    /// Default: does nothing.
    public func connection(_ connection: URLConnection, didReceive data: Data) {}

    /// Default: `nil`.
    public func connection(_ connection: URLConnection, needNewBodyStream request: URLRequest) -> InputStream? {
        nil
    }

    /// Default: does nothing.
    public func connection(
        _ connection: URLConnection,
        didSendBodyData bytesWritten: Int,
        totalBytesWritten: Int,
        totalBytesExpectedToWrite: Int
    ) {}

    /// Default: returns `cachedResponse` unchanged.
    public func connection(
        _ connection: URLConnection,
        willCacheResponse cachedResponse: CachedURLResponse
    ) -> CachedURLResponse? {
        cachedResponse
    }

    /// Default: does nothing.
    public func connectionDidFinishLoading(_ connection: URLConnection) {}
}
