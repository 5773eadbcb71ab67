import Foundation
import NIOCore
import TetherConcurrency

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Receives the events of one ``HTTPLoad`` in order and answers its questions.
///
/// `URLConnection` forwards them to its delegate on the delivery target; `data(for:)`, `download` and the
/// operation use small observers of their own.
protocol LoadObserver: AnyObject, Sendable {
    /// Canonicalisation (`redirectResponse == nil`) and redirects; nil stops (silently / delivers the 3xx).
    func loadWillSend(_ request: URLRequest, redirectResponse: HTTPURLResponse?) async -> URLRequest?
    func loadShouldUseCredentialStorage() async -> Bool
    /// Hands the challenge to whoever answers it through its sender.
    func loadDidReceive(_ challenge: URLAuthenticationChallenge)
    /// A fresh body stream (after a redirect or a challenge). Sendable: the stream is made on the delegate's side
    /// and from then on read only by the load.
    func loadNeedsNewBodyStream(_ request: URLRequest) async -> UncheckedSendableBox<InputStream?>
    func loadDidSendBodyData(bytesWritten: Int, totalBytesWritten: Int, totalBytesExpectedToWrite: Int)
    func loadDidReceive(_ response: HTTPURLResponse) async throws
    func loadDidReceive(_ data: ByteBuffer) async throws
    func loadWillCache(_ cachedResponse: CachedURLResponse) async -> CachedURLResponse?
    /// Whether the load records its ``URLConnectionMetrics`` (a few dates and a lock per chunk that no other load
    /// pays for).
    var collectsMetrics: Bool { get }
    /// The load's metrics, just before it finishes or fails (only when ``collectsMetrics``).
    func loadDidCollect(_ metrics: URLConnectionMetrics)
    func loadDidFinish() async
    func loadDidFail(_ error: URLError) async
    /// Canonicalisation returned nil: the load ends without a terminal callback.
    func loadDidStopSilently()
}

extension LoadObserver {
    func loadWillSend(_ request: URLRequest, redirectResponse: HTTPURLResponse?) async -> URLRequest? { request }
    func loadShouldUseCredentialStorage() async -> Bool { true }
    func loadDidReceive(_ challenge: URLAuthenticationChallenge) {
        (challenge.sender as? ChallengeSender)?.answer(.performDefaultHandling)
    }
    func loadNeedsNewBodyStream(_ request: URLRequest) async -> UncheckedSendableBox<InputStream?> {
        UncheckedSendableBox(nil)
    }
    func loadDidSendBodyData(bytesWritten: Int, totalBytesWritten: Int, totalBytesExpectedToWrite: Int) {}
    func loadWillCache(_ cachedResponse: CachedURLResponse) async -> CachedURLResponse? { cachedResponse }
    func loadDidStopSilently() {}
    var collectsMetrics: Bool { false }
    func loadDidCollect(_ metrics: URLConnectionMetrics) {}
}
