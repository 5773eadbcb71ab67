import Foundation
import NIOCore
import TetherConcurrency

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Collects a load's body in memory, up to a limit (`data(for:)`, the synchronous and queue APIs).
// Sendable: its mutable state is touched only from the load's task, one event at a time.
final class CollectingObserver: LoadObserver, @unchecked Sendable {
    private var response: HTTPURLResponse?
    private var body = Data()
    private var metrics: URLConnectionMetrics?
    private let limit: Int
    let collectsMetrics: Bool
    private let completion: @Sendable (LoadOutcome) -> Void

    init(limit: Int, collectsMetrics: Bool = false, completion: @escaping @Sendable (LoadOutcome) -> Void) {
        self.limit = limit
        self.collectsMetrics = collectsMetrics
        self.completion = completion
    }

    func loadDidReceive(_ response: HTTPURLResponse) async throws {
        if response.expectedContentLength > Int64(self.limit) {
            throw URLError.tether(.dataLengthExceedsMaximum, url: response.url)
        }
        self.response = response
        self.body = Data()
        if response.expectedContentLength > 0 { self.body.reserveCapacity(Int(response.expectedContentLength)) }
    }

    func loadDidReceive(_ data: ByteBuffer) async throws {
        if self.body.count + data.readableBytes > self.limit {
            throw URLError.tether(.dataLengthExceedsMaximum, url: self.response?.url)
        }
        self.body.append(contentsOf: data.readableBytesView)
    }

    func loadDidCollect(_ metrics: URLConnectionMetrics) {
        self.metrics = metrics
    }

    func loadDidFinish() async {
        self.completion(LoadOutcome(response: self.response, data: self.body, error: nil, metrics: self.metrics))
    }

    func loadDidFail(_ error: URLError) async {
        self.completion(LoadOutcome(response: self.response, data: nil, error: error, metrics: self.metrics))
    }

    func loadDidStopSilently() {
        self.completion(LoadOutcome(response: nil, data: nil, error: URLError.tether(.cancelled, url: nil)))
    }
}
