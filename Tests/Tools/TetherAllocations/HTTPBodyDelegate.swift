import Foundation
import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A data delegate that counts the body and resumes its loader when the load ends. Its callbacks run one at a time
/// on the connection's delegate queue.
final class HTTPBodyDelegate: URLConnectionDataDelegate, @unchecked Sendable {
    // Sendable: set before the load starts, then touched in the connection's callbacks only (one at a time).
    private var continuation: CheckedContinuation<Int, any Error>?
    private var count = 0
    private var status = 0

    /// Loads `request` through a delegate on `queue`; returns the body length.
    static func load(_ request: URLRequest, queue: OperationQueue) async throws -> Int {
        let delegate = HTTPBodyDelegate()
        return try await withCheckedThrowingContinuation { continuation in
            delegate.continuation = continuation
            guard let connection = URLConnection(request: request, delegate: delegate, startImmediately: false) else {
                return continuation.resume(throwing: HarnessError("no connection"))
            }
            connection.setDelegateQueue(queue)
            connection.start()
        }
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        status = (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        count += data.count
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        finish(status == 200 ? .success(count) : .failure(HarnessError("HTTP \(status)")))
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        finish(.failure(error))
    }

    private func finish(_ result: Result<Int, any Error>) {
        continuation?.resume(with: result)
        continuation = nil
    }
}
