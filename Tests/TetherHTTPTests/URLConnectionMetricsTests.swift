import Foundation
import Testing

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `URLConnection.dataAndMetrics(for:)`: one transaction per exchange, with its times, protocol and byte counts.
@Suite(.timeLimit(.minutes(1)))
struct URLConnectionMetricsTests {
    @Test func aGETHasOneNetworkTransactionWithOrderedTimesAndItsByteCount() async throws {
        let server = try await TestServer.http()
        let (data, _, metrics) = try await URLConnection.dataAndMetrics(
            for: URLRequest(url: server.url("/big?size=100000")),
            configuration: .uncached
        )
        #expect(data.count == 100_000)
        #expect(metrics.transactions.count == 1)
        #expect(metrics.redirectCount == 0)
        let transaction = try #require(metrics.transactions.first)
        #expect(transaction.resourceFetchType == .networkLoad)
        #expect(transaction.networkProtocolName == "http/1.1")
        #expect(transaction.response?.statusCode == 200)
        #expect(transaction.countOfResponseBodyBytesReceived == 100_000)
        #expect(transaction.countOfRequestBodyBytesSent == 0)
        let (sent, head, end) = (
            try #require(transaction.requestStartDate), try #require(transaction.responseStartDate),
            try #require(transaction.responseEndDate)
        )
        #expect(transaction.fetchStartDate <= sent && sent <= head && head <= end)
        #expect(metrics.taskInterval.start <= transaction.fetchStartDate && end <= metrics.taskInterval.end)
        #expect(transaction.domainLookupStartDate == nil && transaction.connectStartDate == nil)
        #expect(transaction.isReusedConnection == nil)
    }

    @Test func eachRedirectHopIsATransaction() async throws {
        let server = try await TestServer.http()
        let (_, response, metrics) = try await URLConnection.dataAndMetrics(
            for: URLRequest(url: server.url("/redirect/2")),
            configuration: .uncached
        )
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(metrics.redirectCount == 2)
        #expect(metrics.transactions.map { $0.response?.statusCode } == [302, 302, 200])
        #expect(metrics.transactions.map { $0.request.url?.path } == ["/redirect/2", "/redirect/1", "/echo"])
        #expect(metrics.transactions.allSatisfy { $0.responseEndDate != nil })
    }

    @Test func aRequestBodyIsCountedAndACachedResponseIsALocalTransaction() async throws {
        let server = try await TestServer.http()
        var post = URLRequest(url: server.url("/echo"))
        post.httpMethod = "POST"
        post.httpBody = Data(repeating: 0x41, count: 1_000)
        let (_, _, posted) = try await URLConnection.dataAndMetrics(for: post, configuration: .uncached)
        #expect(posted.transactions.first?.countOfRequestBodyBytesSent == 1_000)

        let configuration = URLConnection.Configuration(responseCache: HTTPResponseCache())
        let url = server.url("/cache/metrics-\(UUID().uuidString)?cc=max-age=600")
        _ = try await URLConnection.dataAndMetrics(for: URLRequest(url: url), configuration: configuration)
        let (data, _, cached) = try await URLConnection.dataAndMetrics(
            for: URLRequest(url: url),
            configuration: configuration
        )
        #expect(cached.transactions.count == 1)
        #expect(cached.transactions.first?.resourceFetchType == .localCache)
        #expect(cached.transactions.first?.networkProtocolName == nil)
        #expect(cached.transactions.first?.countOfResponseBodyBytesReceived == Int64(data.count))
    }

    @Test func anHTTP2LoadSaysH2() async throws {
        var configuration = try trustingOwnAuthority(caFile: try await TestCertificates.shared().caCertificatePath)
        configuration.responseCache = nil
        let metrics = try await withHTTP2TestServer { server in
            try await URLConnection.dataAndMetrics(
                for: URLRequest(url: server.url("/hello")),
                configuration: configuration
            ).2
        }
        #expect(metrics.transactions.first?.networkProtocolName == "h2")
    }

    @Test func aLoadWhoseObserverDoesNotAskRecordsNoMetrics() async throws {
        let server = try await TestServer.http()
        for asks in [false, true] {
            let (collected, done) = AsyncStream.makeStream(of: URLConnectionMetrics?.self)
            let observer = CollectingObserver(limit: 1 << 20, collectsMetrics: asks) { done.yield($0.metrics) }
            HTTPLoad(request: URLRequest(url: server.url("/hello")), configuration: .uncached, observer: observer)
                .start()
            var iterator = collected.makeAsyncIterator()
            let metrics = await iterator.next()
            #expect((metrics ?? nil != nil) == asks)
        }
    }
}
