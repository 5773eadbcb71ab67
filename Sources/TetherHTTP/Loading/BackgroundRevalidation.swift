import Foundation
import NIOCore
import TetherConcurrency

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The observer of a background revalidation (a `stale-while-revalidate` hit): it lets the load store what it gets
/// and ignores everything else. Nobody is there to decide for the user, so it decides nothing the user would have:
/// it follows no redirect, answers no challenge (the load fails and the stale entry stays) and uses no stored
/// credential; what it stores keeps the storage policy of the entry it revalidates (memory only stays memory only).
final class BackgroundRevalidation: LoadObserver {
    private let storagePolicy: URLCache.StoragePolicy
    private let onEnd: @Sendable () -> Void

    /// - Parameters:
    ///   - storagePolicy: The storage policy of the entry revalidated.
    ///   - onEnd: Called once when the load ends, however it ends.
    init(storagePolicy: URLCache.StoragePolicy, onEnd: @escaping @Sendable () -> Void) {
        self.storagePolicy = storagePolicy
        self.onEnd = onEnd
    }

    func loadWillSend(_ request: URLRequest, redirectResponse: HTTPURLResponse?) async -> URLRequest? {
        redirectResponse == nil ? request : nil
    }

    func loadShouldUseCredentialStorage() async -> Bool { false }

    func loadDidReceive(_ challenge: URLAuthenticationChallenge) {
        (challenge.sender as? ChallengeSender)?.answer(.cancel)
    }

    func loadWillCache(_ cachedResponse: CachedURLResponse) async -> CachedURLResponse? {
        guard cachedResponse.storagePolicy != self.storagePolicy else { return cachedResponse }
        return CachedURLResponse(
            response: cachedResponse.response,
            data: cachedResponse.data,
            userInfo: cachedResponse.userInfo,
            storagePolicy: self.storagePolicy
        )
    }

    func loadDidReceive(_ response: HTTPURLResponse) async throws {}
    func loadDidReceive(_ data: ByteBuffer) async throws {}
    func loadDidFinish() async { self.onEnd() }
    func loadDidFail(_ error: URLError) async { self.onEnd() }
    func loadDidStopSilently() { self.onEnd() }
}
