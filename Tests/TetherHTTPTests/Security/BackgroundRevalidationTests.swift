import Foundation
import Testing

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The load that revalidates a `stale-while-revalidate` hit: it decides nothing on the user's behalf, and one runs
/// per entry at a time.
struct BackgroundRevalidationTests {
    static func observer(_ policy: URLCache.StoragePolicy = .allowedInMemoryOnly) -> BackgroundRevalidation {
        BackgroundRevalidation(storagePolicy: policy, onEnd: {})
    }

    @Test func whatItStoresKeepsTheStoragePolicyOfTheEntryItRevalidates() async {
        let url = URL(string: "http://example.test/")!
        let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])!
        let proposed = CachedURLResponse(
            response: response,
            data: Data("x".utf8),
            userInfo: nil,
            storagePolicy: .allowed
        )
        let decided = await Self.observer(.allowedInMemoryOnly).loadWillCache(proposed)
        #expect(decided?.storagePolicy == .allowedInMemoryOnly)
        #expect(decided?.data == Data("x".utf8))
    }

    @Test func itFollowsNoRedirectAndUsesNoStoredCredential() async {
        let url = URL(string: "http://example.test/")!
        let redirect = HTTPURLResponse(url: url, statusCode: 302, httpVersion: "HTTP/1.1", headerFields: [:])!
        let observer = Self.observer()
        #expect(await observer.loadWillSend(URLRequest(url: url), redirectResponse: nil) != nil)
        #expect(await observer.loadWillSend(URLRequest(url: url), redirectResponse: redirect) == nil)
        #expect(await observer.loadShouldUseCredentialStorage() == false)
    }

    @Test func itCancelsAChallenge() async {
        let sender = ChallengeSender()
        let challenge = URLAuthenticationChallenge(
            protectionSpace: URLProtectionSpace(
                host: "example.test",
                port: 80,
                protocol: "http",
                realm: "r",
                authenticationMethod: NSURLAuthenticationMethodHTTPBasic
            ),
            proposedCredential: nil,
            previousFailureCount: 0,
            failureResponse: nil,
            error: nil,
            sender: sender
        )
        let answer = await sender.waitForAnswer { Self.observer().loadDidReceive(challenge) }
        guard case .cancel = answer else {
            Issue.record("expected cancel, got \(answer)")
            return
        }
    }

    @Test func oneRevalidationPerEntryRunsAtATime() {
        let cache = HTTPResponseCache()
        #expect(cache.beginRevalidation(key: "http://example.test/a"))
        #expect(!cache.beginRevalidation(key: "http://example.test/a"))
        #expect(cache.beginRevalidation(key: "http://example.test/b"))
        cache.endRevalidation(key: "http://example.test/a")
        #expect(cache.beginRevalidation(key: "http://example.test/a"))
    }
}
