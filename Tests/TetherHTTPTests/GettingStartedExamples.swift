import Foundation
import NIOSSL
import Testing
import TetherConcurrency
import TetherHTTP
import TetherTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The code of the article "Getting started" (TetherHTTP/Docs.docc/GettingStarted.md). Each Swift block of the
// article appears here line for line (`everySwiftBlockOfTheArticleIsCodeOfThisFile` checks it); the tests below run
// them against the Python test server on loopback.

// MARK: - Load a URL

func fetchGreeting(from url: URL) async throws -> String {
    let request = URLRequest(url: url, cachePolicy: .useProtocolCachePolicy, timeoutInterval: 30)
    let (data, response) = try await URLConnection.data(for: request)
    guard let http = response as? HTTPURLResponse, http.statusCode == 200 else {
        throw URLError(.badServerResponse)
    }
    return String(decoding: data, as: UTF8.self)
}

func describeFailure(_ error: any Error) -> String {
    guard let error = error as? URLError else { return "\(error)" }
    switch error.code {
    case .timedOut: return "the server stopped answering"
    case .cannotConnectToHost, .cannotFindHost: return "the server cannot be reached"
    case .serverCertificateUntrusted, .secureConnectionFailed: return "the connection is not secure"
    case .cancelled: return "cancelled"
    default: return "loading \(error.failingURL?.absoluteString ?? "?") failed (\(error.code.rawValue))"
    }
}

// MARK: - Follow a load with a delegate

final class PageLoader: URLConnectionDataDelegate {
    let onDone: @Sendable (Result<(status: Int, body: Data), any Error>) -> Void
    private var status = 0
    private var body = Data()  // touched on the delegate queue only

    init(onDone: @escaping @Sendable (Result<(status: Int, body: Data), any Error>) -> Void) {
        self.onDone = onDone
    }

    func load(_ request: URLRequest, on queue: OperationQueue) -> URLConnection? {
        guard let connection = URLConnection(request: request, delegate: self, startImmediately: false) else {
            return nil  // not an http(s) URL with a host
        }
        connection.setDelegateQueue(queue)
        connection.start()
        return connection
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        status = (response as? HTTPURLResponse)?.statusCode ?? 0
        body = Data()
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        body.append(data)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        onDone(.success((status, body)))
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        onDone(.failure(error))
    }
}

// MARK: - Download to a file

func downloadReport(
    from url: URL,
    to file: URL,
    onProgress: @escaping @Sendable (Double) -> Void
) async throws -> HTTPURLResponse {
    try await URLConnection.download(URLRequest(url: url), to: file) { progress in
        if let fraction = progress.fractionCompleted { onProgress(fraction) }
    }
}

// MARK: - Resume a download

func downloadResuming(_ url: URL, to file: URL, attempts: Int) async throws -> HTTPURLResponse {
    var resumeData: DownloadResumeData?
    for _ in 1..<attempts {
        do {
            return try await URLConnection.download(URLRequest(url: url), to: file, resumingWith: resumeData)
        } catch let error as URLError where error.code == .networkConnectionLost {
            resumeData = error.downloadResumeData
        }
    }
    return try await URLConnection.download(URLRequest(url: url), to: file, resumingWith: resumeData)
}

// MARK: - Cache responses

func makeCachingConfiguration(directory: URL) -> URLConnection.Configuration {
    let cache = HTTPResponseCache(memoryCapacity: 1 << 20, diskCapacity: 32 << 20, directory: directory)
    return URLConnection.Configuration(responseCache: cache)
}

func loadOffline(_ url: URL, configuration: URLConnection.Configuration) async throws -> Data {
    var request = URLRequest(url: url)
    request.cachePolicy = .returnCacheDataDontLoad  // URLError(.resourceUnavailable) when nothing is stored
    return try await URLConnection.data(for: request, configuration: configuration).0
}

func makeTestCache() -> (HTTPResponseCache, ManualHTTPCacheClock) {
    let clock = ManualHTTPCacheClock()
    return (HTTPResponseCache(isPrivate: true, clock: clock), clock)
}
// … load a response with `Cache-Control: max-age=60`, then `clock.advance(by: .seconds(61))`:
// the next load revalidates it.

// MARK: - Answer authentication challenges

final class SignInDelegate: URLConnectionDataDelegate {
    let user: String
    let password: String
    let onStatus: @Sendable (Int) -> Void

    init(user: String, password: String, onStatus: @escaping @Sendable (Int) -> Void) {
        self.user = user
        self.password = password
        self.onStatus = onStatus
    }

    func connection(_ connection: URLConnection, willSendRequestFor challenge: URLAuthenticationChallenge) {
        guard challenge.previousFailureCount == 0 else {
            connection.answer(challenge, with: .continueWithoutCredential)  // deliver the 401 as the response
            return
        }
        let credential = URLCredential(user: user, password: password, persistence: .forSession)
        connection.answer(challenge, with: .useCredential(credential))
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        onStatus((response as? HTTPURLResponse)?.statusCode ?? 0)
    }
}

// MARK: - Run loads as operations

func loadAll(_ urls: [URL]) -> [URLConnectionOperation] {
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 2
    let operations = urls.map { URLConnectionOperation(request: URLRequest(url: $0)) }
    queue.addOperations(operations, waitUntilFinished: true)
    return operations  // each has responseData and response, or error
}

// MARK: - Configure the engine

func trustingOwnAuthority(caFile: String) throws -> URLConnection.Configuration {
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
    return URLConnection.Configuration(tlsConfiguration: tls)
}

// MARK: - Tests

/// A serial delegate queue for one test.
private func serialQueue() -> OperationQueue {
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    return queue
}

@Suite("The article \"Getting started\" of TetherHTTP: its code compiles and runs", .timeLimit(.minutes(2)))
struct HTTPGettingStartedExamples {
    let server: TestServer

    init() async throws {
        server = try await TestServer.http()
    }

    @Test("every Swift block of the article is code of this file, line for line")
    func everySwiftBlockOfTheArticleIsCodeOfThisFile() throws {
        let article = "Sources/TetherHTTP/Docs.docc/GettingStarted.md"
        #expect(try ArticleSnippets.checkedBlocks(ofArticle: article).count == 11)
        let missing = try ArticleSnippets.blocksMissing(
            fromArticle: article,
            inFiles: ["Tests/TetherHTTPTests/GettingStartedExamples.swift"]
        )
        #expect(missing.isEmpty, "not in GettingStartedExamples.swift:\n\(missing.joined(separator: "\n---\n"))")
    }

    @Test("fetchGreeting returns the body of a 200 and throws for a 404")
    func fetchGreetingLoads() async throws {
        #expect(try await fetchGreeting(from: server.url("/hello")) == "hello")
        await expectURLError(.badServerResponse) { _ = try await fetchGreeting(from: self.server.url("/status/404")) }
    }

    @Test("describeFailure names a refused connection, an idle timeout, a cancellation and another error")
    func failuresAreDescribed() async throws {
        let refused = URL(string: "http://127.0.0.1:\(try closedPort())/")!
        do {
            _ = try await fetchGreeting(from: refused)
            Issue.record("expected a refused connection")
        } catch {
            #expect(describeFailure(error) == "the server cannot be reached")
        }
        let stalled = URLRequest(url: server.url("/stallhead?for=5"), timeoutInterval: 0.5)
        do {
            _ = try await URLConnection.data(for: stalled, configuration: .uncached)
            Issue.record("expected a timeout")
        } catch {
            #expect(describeFailure(error) == "the server stopped answering")
        }
        #expect(describeFailure(URLError(.cancelled)) == "cancelled")
        let url = server.url("/x")
        let other = URLError(.badServerResponse, userInfo: [NSURLErrorFailingURLErrorKey: url])
        let code = URLError.Code.badServerResponse.rawValue
        #expect(describeFailure(other) == "loading \(url.absoluteString) failed (\(code))")
    }

    @Test("PageLoader collects a chunked body with its status, and reports a refused connection as a failure")
    func pageLoaderFollowsOneLoad() async throws {
        let done = Signal<UncheckedSendableBox<Result<(status: Int, body: Data), any Error>>>()
        let loader = PageLoader { done.fulfil(UncheckedSendableBox($0)) }
        let connection = loader.load(URLRequest(url: server.url("/chunked?n=3")), on: serialQueue())
        #expect(connection != nil)
        let (status, body) = try await done.wait().value.get()
        #expect(status == 200)
        #expect(String(decoding: body, as: UTF8.self) == "chunk-0;chunk-1;chunk-2;")

        let failed = Signal<UncheckedSendableBox<Result<(status: Int, body: Data), any Error>>>()
        let refused = PageLoader { failed.fulfil(UncheckedSendableBox($0)) }
        _ = refused.load(URLRequest(url: URL(string: "http://127.0.0.1:\(try closedPort())/")!), on: serialQueue())
        if case .failure(let error) = try await failed.wait().value {
            #expect((error as? URLError)?.code == .cannotConnectToHost)
        } else {
            Issue.record("expected a failure")
        }
        let ftp = URLRequest(url: URL(string: "ftp://example.com/")!)
        #expect(PageLoader { _ in }.load(ftp, on: serialQueue()) == nil)
    }

    @Test("downloadReport writes the whole body and reports 100 %; a 500 writes nothing")
    func downloadWritesTheFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("report.bin")
        let fractions = LockedBox<[Double]>([])
        let response = try await downloadReport(from: server.url("/big?size=300000"), to: file) { fraction in
            fractions.withLock { $0.append(fraction) }
        }
        #expect(response.statusCode == 200)
        #expect(try Data(contentsOf: file).count == 300_000)
        #expect(fractions.withLock { $0.last } == 1)

        let failed = directory.appendingPathComponent("error.bin")
        await expectURLError(.badServerResponse) {
            _ = try await downloadReport(from: self.server.url("/status/500"), to: failed) { _ in }
        }
        #expect(!FileManager.default.fileExists(atPath: failed.path))
    }

    @Test("a disk cache serves a stored response offline, also from a new instance; nothing stored is unavailable")
    func cachedResponsesServeOffline() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gs-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let name = "gs\(UUID().uuidString.prefix(8))"
        let url = server.url("/cache/\(name)?cc=max-age%3D60")
        let configuration = makeCachingConfiguration(directory: directory)
        let (loaded, _) = try await URLConnection.data(for: URLRequest(url: url), configuration: configuration)
        #expect(try await loadOffline(url, configuration: configuration) == loaded)
        #expect(try await loadOffline(url, configuration: makeCachingConfiguration(directory: directory)) == loaded)
        #expect(try await server.counts()["200:\(name)"] == 1)
        await expectURLError(.resourceUnavailable) {
            _ = try await loadOffline(self.server.url("/cache/never-\(name)"), configuration: configuration)
        }
    }

    @Test("makeTestCache's clock ages a stored response without waiting: past its max-age it is loaded again")
    func aManualClockAgesTheCache() async throws {
        let (cache, clock) = makeTestCache()
        let configuration = URLConnection.Configuration(responseCache: cache)
        let name = "gs\(UUID().uuidString.prefix(8))"
        let url = server.url("/cache/\(name)?cc=max-age%3D60")
        _ = try await URLConnection.data(for: URLRequest(url: url), configuration: configuration)
        clock.advance(by: .seconds(59))
        _ = try await URLConnection.data(for: URLRequest(url: url), configuration: configuration)
        #expect(try await server.counts()["200:\(name)"] == 1)
        clock.advance(by: .seconds(2))
        _ = try await URLConnection.data(for: URLRequest(url: url), configuration: configuration)
        #expect(try await server.counts()["200:\(name)"] == 2)
    }

    @Test("SignInDelegate passes Basic and Digest challenges, and a wrong password ends with the 401")
    func challengesAreAnswered() async throws {
        for (path, password, expected) in [
            ("/basic?user=ann&pass=secret", "secret", 200),
            ("/digest?user=ann&pass=secret", "secret", 200),
            ("/basic?user=ann&pass=secret", "wrong", 401),
        ] {
            let status = Signal<Int>()
            let delegate = SignInDelegate(user: "ann", password: password, onStatus: status.fulfil)
            var request = URLRequest(url: server.url(path))
            request.cachePolicy = .reloadIgnoringLocalCacheData
            let connection = URLConnection(request: request, delegate: delegate, startImmediately: false)!
            connection.setDelegateQueue(serialQueue())
            connection.start()
            #expect(try await status.wait() == expected, "\(path) with \(password)")
        }
    }

    @Test("loadAll runs operations two at a time and each keeps its body, response or error")
    func operationsKeepTheirResults() async throws {
        let refused = URL(string: "http://127.0.0.1:\(try closedPort())/")!
        let urls = [server.url("/hello"), server.url("/status/404"), refused]
        let operations = try await offPool { UncheckedSendableBox(loadAll(urls)) }.value
        let allFinished = operations.allSatisfy { $0.isFinished }
        #expect(allFinished)
        #expect(operations[0].responseData == Data("hello".utf8))
        #expect((operations[1].response as? HTTPURLResponse)?.statusCode == 404)
        #expect((operations[2].error as? URLError)?.code == .cannotConnectToHost)
    }

    @Test("a configuration that trusts the test authority loads over HTTPS")
    func ownAuthorityIsTrusted() async throws {
        let secure = try await TestServer.https()
        let configuration = try trustingOwnAuthority(caFile: try await TestCertificates.shared().caCertificatePath)
        let request = URLRequest(url: secure.url("/hello"))
        let (data, _) = try await URLConnection.data(for: request, configuration: configuration)
        #expect(data == Data("hello".utf8))
    }
}
