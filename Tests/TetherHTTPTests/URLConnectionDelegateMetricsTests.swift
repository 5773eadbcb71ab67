import Foundation
import Testing
import TetherConcurrency

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The delegate face's metrics (`URLConnectionMetricsDelegate`) and `downloadAndMetrics(_:to:)`.
@Suite(.timeLimit(.minutes(1)))
struct URLConnectionDelegateMetricsTests {
    /// Records the body, the metrics and the last message, in the order they came.
    // Sendable: what it records is in a `LockedBox`.
    final class MetricsDelegate: URLConnectionDataDelegate, URLConnectionMetricsDelegate, @unchecked Sendable {
        enum Event: Equatable {
            case metrics
            case finished
            case failed
        }

        private struct Recording {
            var events: [Event] = []
            var metrics: URLConnectionMetrics?
            var bytes = 0
        }

        private let recording = LockedBox(Recording())
        let done = Signal<Bool>()

        var events: [Event] { self.recording.withLock { $0.events } }
        var metrics: URLConnectionMetrics? { self.recording.withLock { $0.metrics } }
        var bytes: Int { self.recording.withLock { $0.bytes } }

        func connection(_ connection: URLConnection, didReceive data: Data) {
            self.recording.withLock { $0.bytes += data.count }
        }

        func connection(_ connection: URLConnection, didFinishCollecting metrics: URLConnectionMetrics) {
            self.recording.withLock {
                $0.events.append(.metrics)
                $0.metrics = metrics
            }
        }

        func connectionDidFinishLoading(_ connection: URLConnection) {
            self.recording.withLock { $0.events.append(.finished) }
            self.done.fulfil(true)
        }

        func connection(_ connection: URLConnection, didFailWithError error: any Error) {
            self.recording.withLock { $0.events.append(.failed) }
            self.done.fulfil(false)
        }
    }

    private func start(_ request: URLRequest, _ delegate: any URLConnectionDelegate) -> URLConnection {
        let connection = URLConnection(
            request: request,
            delegate: delegate,
            startImmediately: false,
            configuration: .uncached
        )!
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        connection.setDelegateQueue(queue)
        connection.start()
        return connection
    }

    @Test func aMetricsDelegateGetsThemOnceJustBeforeTheLastMessage() async throws {
        let server = try await TestServer.http()
        let delegate = MetricsDelegate()
        let connection = self.start(request(server.url("/redirect/1")), delegate)
        #expect(connection.collectsMetrics)
        #expect(try await delegate.done.wait())
        #expect(delegate.events == [.metrics, .finished])
        let metrics = try #require(delegate.metrics)
        #expect(metrics.redirectCount == 1)
        #expect(metrics.transactions.map { $0.response?.statusCode } == [302, 200])
        #expect(metrics.transactions.last?.countOfResponseBodyBytesReceived == Int64(delegate.bytes))
        #expect(metrics.transactions.allSatisfy { $0.resourceFetchType == .networkLoad })
    }

    @Test func aFailedLoadDeliversItsMetricsBeforeTheFailure() async throws {
        let delegate = MetricsDelegate()
        let refused = URL(string: "http://127.0.0.1:\(try closedPort())/")!
        _ = self.start(request(refused), delegate)
        #expect(try await delegate.done.wait() == false)
        #expect(delegate.events == [.metrics, .failed])
        let transaction = try #require(delegate.metrics?.transactions.first)
        #expect(transaction.request.url == refused)
        #expect(transaction.response == nil && transaction.responseStartDate == nil)
    }

    @Test func aDelegateThatDoesNotAdoptTheProtocolRecordsNothing() async throws {
        let server = try await TestServer.http()
        let delegate = RecordingDelegate()
        let connection = try await load(request(server.url("/hello")), delegate: delegate)
        #expect(!connection.collectsMetrics)
        #expect(delegate.mainEvents.last == .finished)
    }

    @Test func aDownloadReturnsItsMetrics() async throws {
        let server = try await TestServer.http()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlmetrics-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("big.bin")
        let (response, metrics) = try await URLConnection.downloadAndMetrics(
            URLRequest(url: server.url("/big?size=300000")),
            to: file,
            configuration: .uncached
        )
        #expect(response.statusCode == 200)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int)
        #expect(size == 300_000)
        #expect(metrics.transactions.count == 1)
        #expect(metrics.transactions.first?.countOfResponseBodyBytesReceived == 300_000)
        #expect(metrics.transactions.first?.responseEndDate != nil)
    }
}
