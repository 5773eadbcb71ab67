import Foundation
import TetherConcurrency
import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request of a test through `URLConnection`'s delegate face: the response and body as the delegate sees them,
/// following redirects unless the test says `redirect: manual` (then the delegate declines, as `fetch` does).
final class CacheTestLoad: URLConnectionDataDelegate, Sendable {
    /// What came back.
    struct Received: Sendable {
        var response: HTTPURLResponse
        var body: Data
    }

    private struct State {
        var response: HTTPURLResponse?
        var body = Data()
        var continuation: CheckedContinuation<Received, any Error>?
    }

    private let followsRedirects: Bool
    private let state = LockedBox(State())

    private init(followsRedirects: Bool) {
        self.followsRedirects = followsRedirects
    }

    /// Loads `request` with `configuration` and returns the final response and its body.
    /// - Throws: The load's `URLError`.
    static func run(
        _ request: URLRequest,
        configuration: URLConnection.Configuration,
        followsRedirects: Bool
    ) async throws -> Received {
        let load = CacheTestLoad(followsRedirects: followsRedirects)
        return try await withCheckedThrowingContinuation { continuation in
            load.state.withLock { $0.continuation = continuation }
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            guard
                let connection = URLConnection(
                    request: request,
                    delegate: load,
                    startImmediately: false,
                    configuration: configuration
                )
            else {
                load.finish(.failure(URLError(.unsupportedURL)))
                return
            }
            connection.setDelegateQueue(queue)
            connection.start()
        }
    }

    private func finish(_ result: Result<Received, any Error>) {
        let continuation = self.state.withLock { state in
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(with: result)
    }

    func connection(
        _ connection: URLConnection,
        willSend request: URLRequest,
        redirectResponse response: URLResponse?
    ) -> URLRequest? {
        response == nil || self.followsRedirects ? request : nil
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        self.state.withLock { $0.response = response as? HTTPURLResponse }
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        self.state.withLock { $0.body.append(data) }
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        let received = self.state.withLock { state in state.response.map { Received(response: $0, body: state.body) } }
        self.finish(received.map { .success($0) } ?? .failure(URLError(.badServerResponse)))
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        self.finish(.failure(error))
    }
}
