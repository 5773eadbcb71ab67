import Foundation
import NIOHTTP1
import TetherConcurrency

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Collects one load's ``URLConnectionMetrics`` as its steps happen (the load's task, and the event loop for the
/// request body's progress).
final class MetricsRecorder: Sendable {
    private struct State {
        var start = Date()
        var transactions: [URLConnectionMetrics.Transaction] = []
        var redirects = 0
    }

    private let state = LockedBox(State())

    /// A request is about to go out.
    func willSend(_ request: URLRequest, isRedirect: Bool) {
        state.withLock { state in
            if isRedirect { state.redirects += 1 }
            state.transactions.append(
                .init(
                    request: request,
                    resourceFetchType: .networkLoad,
                    fetchStartDate: Date(),
                    requestStartDate: Date(),
                    countOfRequestBodyBytesSent: 0,
                    countOfResponseBodyBytesReceived: 0
                )
            )
        }
    }

    /// The request body's bytes handed to the connection so far.
    func sentBody(total: Int) {
        state.withLock { state in
            guard !state.transactions.isEmpty else { return }
            state.transactions[state.transactions.count - 1].countOfRequestBodyBytesSent = Int64(total)
        }
    }

    /// The current request's response head arrived.
    func headArrived(version: HTTPVersion) {
        let name =
            switch (version.major, version.minor) {
            case (2, _): "h2"
            case (1, 0): "http/1.0"
            default: "http/1.1"
            }
        updateLast {
            $0.responseStartDate = Date()
            $0.networkProtocolName = name
        }
    }

    /// The current request's response, as delivered or shown to the delegate.
    func setResponse(_ response: HTTPURLResponse) {
        updateLast { $0.response = response }
    }

    /// Body bytes of the current response.
    func receivedBody(_ count: Int) {
        updateLast { $0.countOfResponseBodyBytesReceived += Int64(count) }
    }

    /// The current response's body ended.
    func responseEnded() {
        updateLast { $0.responseEndDate = Date() }
    }

    /// A response served from the cache.
    func servedFromCache(_ request: URLRequest, response: HTTPURLResponse, bodyLength: Int) {
        let now = Date()
        state.withLock { state in
            state.transactions.append(
                .init(
                    request: request,
                    response: response,
                    resourceFetchType: .localCache,
                    fetchStartDate: now,
                    responseStartDate: now,
                    responseEndDate: now,
                    countOfRequestBodyBytesSent: 0,
                    countOfResponseBodyBytesReceived: Int64(bodyLength)
                )
            )
        }
    }

    /// The metrics, at the load's end.
    func finish() -> URLConnectionMetrics {
        state.withLock { state in
            URLConnectionMetrics(
                transactions: state.transactions,
                taskInterval: DateInterval(start: state.start, end: max(state.start, Date())),
                redirectCount: state.redirects
            )
        }
    }

    private func updateLast(_ change: (inout URLConnectionMetrics.Transaction) -> Void) {
        state.withLock { state in
            guard !state.transactions.isEmpty else { return }
            change(&state.transactions[state.transactions.count - 1])
        }
    }
}
