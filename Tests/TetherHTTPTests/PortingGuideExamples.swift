import Foundation
import Testing
import TetherConcurrency
import TetherHTTP
import TetherTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The "after" code of the article "From NSURLConnection" (TetherHTTP/Docs.docc/PortingFromNSURLConnection.md).
// Each Swift block of the article that is not marked **Before** appears here line for line
// (`everyAfterBlockOfTheArticleIsCodeOfThisFile` checks it); the tests below run them against the Python test
// server on loopback.

// MARK: - A delegate that collects the body

final class BufferingDelegate: URLConnectionDataDelegate {
    var completionBlock: (@Sendable (Result<Data, any Error>) -> Void)?
    private var buffer = Data()  // touched on the delegate queue only

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        if let http = response as? HTTPURLResponse, http.statusCode == 200 {
            buffer = Data(capacity: Int(max(0, http.expectedContentLength)))
        }
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        buffer.append(data)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        completionBlock?(.success(buffer))
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        completionBlock?(.failure(error))
    }
}

func startLoading(_ request: URLRequest, delegate: BufferingDelegate, queue: OperationQueue) -> URLConnection? {
    // Δ: created with startImmediately: false. initWithRequest:delegate: starts at once, and setDelegateQueue(_:)
    // after the start has no effect.
    let connection = URLConnection(request: request, delegate: delegate, startImmediately: false)
    connection?.setDelegateQueue(queue)
    connection?.start()
    return connection
}

// MARK: - The operation

func loadImageData(_ request: URLRequest, on queue: OperationQueue, completion: @escaping @Sendable (Data?) -> Void) {
    let operation = URLConnectionOperation(request: request)
    operation.completionBlock = { [weak operation] in
        completion(operation?.responseData)  // nil after a failure: see operation.error
    }
    queue.addOperation(operation)  // any queue, any concurrency limit; no run loop to spin
}

// MARK: - Synchronous and queued loads

func loadSynchronously(_ request: URLRequest) -> Data? {
    var response: URLResponse?
    guard let data = try? URLConnection.sendSynchronousRequest(request, returning: &response),
        (response as? HTTPURLResponse)?.statusCode == 200
    else { return nil }
    return data
}

func loadInBackground(_ request: URLRequest, queue: OperationQueue, show: @escaping @Sendable (Data) -> Void) {
    URLConnection.sendAsynchronousRequest(request, queue: queue) { response, data, error in
        guard (response as? HTTPURLResponse)?.statusCode == 200, let data else { return }
        show(data)
    }
}

func loadImage(_ request: URLRequest) async throws -> Data {
    let (data, response) = try await URLConnection.data(for: request)
    guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw URLError(.badServerResponse) }
    return data
}

// MARK: - Run loops and redirects

final class FeedLoader: URLConnectionDataDelegate {
    let allowedHost: String
    let onFeed: @Sendable (Int, Data) -> Void
    private var status = 0
    private var received = Data()

    init(allowedHost: String, onFeed: @escaping @Sendable (Int, Data) -> Void) {
        self.allowedHost = allowedHost
        self.onFeed = onFeed
    }

    func load(_ url: URL, on runLoop: RunLoop) {
        let connection = URLConnection(request: URLRequest(url: url), delegate: self, startImmediately: false)
        connection?.schedule(in: runLoop, forMode: .common)
        connection?.start()
    }

    func connection(
        _ connection: URLConnection,
        willSend request: URLRequest,
        redirectResponse response: URLResponse?
    ) -> URLRequest? {
        if response != nil && request.url?.host != allowedHost { return nil }  // stay on our host
        return request
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        status = (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    func connection(_ connection: URLConnection, didReceive data: Data) { received.append(data) }
    func connectionDidFinishLoading(_ connection: URLConnection) { onFeed(status, received) }
}

// MARK: - Authentication challenges

final class AccountDelegate: URLConnectionDataDelegate {
    let user: String
    let password: String
    let onEnd: @Sendable ((any Error)?) -> Void

    init(user: String, password: String, onEnd: @escaping @Sendable ((any Error)?) -> Void) {
        self.user = user
        self.password = password
        self.onEnd = onEnd
    }

    func connection(_ connection: URLConnection, willSendRequestFor challenge: URLAuthenticationChallenge) {
        if challenge.previousFailureCount == 0 {
            let credential = URLCredential(user: user, password: password, persistence: .forSession)
            challenge.sender?.use(credential, for: challenge)
        } else {
            challenge.sender?.cancel(challenge)  // fails the load with URLError(.userCancelledAuthentication)
        }
    }

    func connectionDidFinishLoading(_ connection: URLConnection) { onEnd(nil) }
    func connection(_ connection: URLConnection, didFailWithError error: any Error) { onEnd(error) }
}

// MARK: - The cache

func makeResponseCache(in caches: URL) -> URLConnection.Configuration {
    let directory = caches.appendingPathComponent("responses", isDirectory: true)
    let cache = HTTPResponseCache(memoryCapacity: 4 << 20, diskCapacity: 32 << 20, directory: directory)
    return URLConnection.Configuration(responseCache: cache)  // Δ: per configuration, not process-wide
}

// MARK: - Errors

func shouldRetry(after error: any Error) -> Bool {
    guard let error = error as? URLError else { return false }
    return [.timedOut, .networkConnectionLost, .cannotConnectToHost].contains(error.code)
}

// MARK: - Tests

@Suite("The article \"From NSURLConnection\": its after examples compile and run", .timeLimit(.minutes(2)))
struct PortingGuideExamples {
    let server: TestServer

    init() async throws {
        server = try await TestServer.http()
    }

    private func refusedURL() throws -> URL {
        URL(string: "http://127.0.0.1:\(try closedPort())/")!
    }

    @Test("every after block of the article is code of this file, line for line")
    func everyAfterBlockOfTheArticleIsCodeOfThisFile() throws {
        let article = "Sources/TetherHTTP/Docs.docc/PortingFromNSURLConnection.md"
        #expect(try ArticleSnippets.checkedBlocks(ofArticle: article).count == 8)
        let missing = try ArticleSnippets.blocksMissing(
            fromArticle: article,
            inFiles: ["Tests/TetherHTTPTests/PortingGuideExamples.swift"]
        )
        #expect(missing.isEmpty, "not in PortingGuideExamples.swift:\n\(missing.joined(separator: "\n---\n"))")
    }

    @Test("the buffering delegate hands over the whole body, or the error of a refused connection")
    func bufferingDelegateCollectsTheBody() async throws {
        let done = Signal<UncheckedSendableBox<Result<Data, any Error>>>()
        let delegate = BufferingDelegate()
        delegate.completionBlock = { done.fulfil(UncheckedSendableBox($0)) }
        let request = URLRequest(url: server.url("/chunked?n=4"))
        #expect(startLoading(request, delegate: delegate, queue: OperationQueue()) != nil)
        let body = try await done.wait().value.get()
        #expect(String(decoding: body, as: UTF8.self) == "chunk-0;chunk-1;chunk-2;chunk-3;")

        let failed = Signal<UncheckedSendableBox<Result<Data, any Error>>>()
        let refused = BufferingDelegate()
        refused.completionBlock = { failed.fulfil(UncheckedSendableBox($0)) }
        _ = startLoading(URLRequest(url: try refusedURL()), delegate: refused, queue: OperationQueue())
        guard case .failure(let error) = try await failed.wait().value else {
            Issue.record("expected a failure")
            return
        }
        #expect((error as? URLError)?.code == .cannotConnectToHost)
    }

    @Test("the operation's completion block sees the body, and nil after a failure")
    func operationCompletesWithTheBody() async throws {
        let queue = OperationQueue()
        let loaded = Signal<UncheckedSendableBox<Data?>>()
        loadImageData(URLRequest(url: server.url("/hello")), on: queue) { loaded.fulfil(UncheckedSendableBox($0)) }
        #expect(try await loaded.wait().value == Data("hello".utf8))
        let failed = Signal<UncheckedSendableBox<Data?>>()
        loadImageData(URLRequest(url: try refusedURL()), on: queue) { failed.fulfil(UncheckedSendableBox($0)) }
        #expect(try await failed.wait().value == nil)
    }

    @Test("the synchronous load returns a 200's body and nil for a 404; the queued one shows the 200's body")
    func synchronousAndQueuedLoads() async throws {
        let hello = URLRequest(url: server.url("/hello"))
        let missing = URLRequest(url: server.url("/status/404"))
        let results = try await offPool {
            UncheckedSendableBox((loadSynchronously(hello), loadSynchronously(missing)))
        }
        #expect(results.value.0 == Data("hello".utf8))
        #expect(results.value.1 == nil)

        let shown = Signal<Data>()
        loadInBackground(hello, queue: OperationQueue(), show: shown.fulfil)
        #expect(try await shown.wait() == Data("hello".utf8))
        #expect(try await loadImage(hello) == Data("hello".utf8))
        await expectURLError(.badServerResponse) { _ = try await loadImage(missing) }
    }

    @Test("the feed loader on a run loop follows a redirect to its host and stops at one to another host")
    func feedLoaderVetsRedirects() async throws {
        let runLoopThread = RunLoopThread()
        defer { runLoopThread.stop() }
        let sameHost = server.url("/hello").absoluteString
        let otherHost = server.url("/hello", host: "localhost").absoluteString
        for (target, expected) in [(sameHost, (200, "hello")), (otherHost, (302, "to"))] {
            let encoded = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let feed = Signal<UncheckedSendableBox<(Int, Data)>>()
            let loader = FeedLoader(allowedHost: "127.0.0.1") { feed.fulfil(UncheckedSendableBox(($0, $1))) }
            loader.load(server.url("/to?code=302&url=\(encoded)"), on: runLoopThread.runLoop)
            let (status, body) = try await feed.wait().value
            #expect(status == expected.0)
            #expect(String(decoding: body, as: UTF8.self) == expected.1)
        }
    }

    @Test("the account delegate signs in through the sender, and a wrong password cancels the challenge")
    func accountDelegateAnswersThroughTheSender() async throws {
        let cases: [(String, URLError.Code?)] = [("pw", nil), ("wrong", .userCancelledAuthentication)]
        for (password, expected) in cases {
            let ended = Signal<UncheckedSendableBox<(any Error)?>>()
            let delegate = AccountDelegate(user: "ann", password: password) {
                ended.fulfil(UncheckedSendableBox($0))
            }
            var request = URLRequest(url: server.url("/basic?user=ann&pass=pw"))
            request.cachePolicy = .reloadIgnoringLocalCacheData
            let connection = URLConnection(request: request, delegate: delegate, startImmediately: false)!
            connection.setDelegateQueue(OperationQueue())
            connection.start()
            let error = try await ended.wait().value
            #expect((error as? URLError)?.code == expected)
        }
    }

    @Test("a cache made like NSURLCache keeps a fresh response on disk and serves it again")
    func responseCacheServesAgain() async throws {
        let caches = FileManager.default.temporaryDirectory.appendingPathComponent("pg-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: caches) }
        let configuration = makeResponseCache(in: caches)
        let name = "pg\(UUID().uuidString.prefix(8))"
        let request = URLRequest(url: server.url("/cache/\(name)?cc=max-age%3D60"))
        let (first, _) = try await URLConnection.data(for: request, configuration: configuration)
        let (second, _) = try await URLConnection.data(for: request, configuration: configuration)
        #expect(first == second)
        #expect(try await server.counts()["200:\(name)"] == 1)
        #expect(configuration.responseCache?.currentDiskUsage ?? 0 > 0)
        let directory = caches.appendingPathComponent("responses").path
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: directory)).isEmpty)
    }

    @Test("shouldRetry says yes to an idle timeout and a refused connection, no to other errors")
    func retryDecision() async throws {
        do {
            let stalled = URLRequest(url: server.url("/stallhead?for=5"), timeoutInterval: 0.5)
            _ = try await URLConnection.data(for: stalled, configuration: .uncached)
            Issue.record("expected a timeout")
        } catch {
            #expect(shouldRetry(after: error))
        }
        do {
            _ = try await URLConnection.data(for: URLRequest(url: try refusedURL()), configuration: .uncached)
            Issue.record("expected a refused connection")
        } catch {
            #expect(shouldRetry(after: error))
        }
        #expect(!shouldRetry(after: URLError(.userCancelledAuthentication)))
        #expect(!shouldRetry(after: CancellationError()))
    }
}
