import Foundation
import NIOCore
import Testing
import TetherConcurrency

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct URLConnectionBodyTests {
    let server: TestServer

    init() async throws {
        server = try await TestServer.http()
    }

    @Test func chunkedBodiesArriveWhole() async throws {
        let (data, response) = try await URLConnection.data(
            for: request(self.server.url("/chunked?n=20")),
            configuration: .uncached
        )
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == (0..<20).map { "chunk-\($0);" }.joined())
        #expect(response.expectedContentLength == -1)
    }

    @Test(arguments: ["gzip", "deflate"])
    func compressedBodiesAreDecodedWithUnknownLength(route: String) async throws {
        let delegate = RecordingDelegate()
        try await load(request(self.server.url("/\(route)")), delegate: delegate)
        #expect(delegate.events.contains(.response(status: 200, expectedLength: -1)))
        let headers = delegate.lastResponse?.allHeaderFields as? [String: String] ?? [:]
        #expect(headers["X-Raw-Length"] == "\(delegate.body.count)")
        #expect(headers["X-Raw-SHA256"] == Digests.hex(Digests.sha256(Array(delegate.body))))
    }

    @Test func textThatCompressesOver25TimesDecodes() async throws {
        let (data, response) = try await URLConnection.data(
            for: request(self.server.url("/gziptext")),
            configuration: .uncached
        )
        let headers = (response as? HTTPURLResponse)?.allHeaderFields as? [String: String] ?? [:]
        #expect(data.count == 3072)
        #expect(headers["X-Raw-SHA256"] == Digests.hex(Digests.sha256(Array(data))))
        let compressed = try #require(headers["X-Compressed-Length"].flatMap(Int.init))
        #expect(data.count > 25 * compressed)
    }

    @Test func aBodyDecodingBeyondTheDecodedSizeLimitFailsWithCannotDecodeContentData() async throws {
        // 1,000,000 bytes decoded from about 1 KiB, against a limit of 100,000, on the streaming (delegate) face.
        var configuration = URLConnection.Configuration.uncached
        configuration.maximumDecodedBodySize = 100_000
        let delegate = RecordingDelegate()
        try await load(request(self.server.url("/gzipbomb")), delegate: delegate, configuration: configuration)
        #expect(delegate.events.last == .failed(.cannotDecodeContentData))
        #expect(delegate.body.count <= 100_000)
    }

    @Test func aCollectedBodyDecodingBeyondItsMaximumFailsWithDataLengthExceedsMaximum() async throws {
        let configuration = URLConnection.Configuration(responseCache: nil, maximumResponseBodySize: 100_000)
        await expectURLError(.dataLengthExceedsMaximum) {
            _ = try await URLConnection.data(for: request(self.server.url("/gzipbomb")), configuration: configuration)
        }
    }

    @Test func withoutDecompressionTheEncodedBytesArrive() async throws {
        let configuration = URLConnection.Configuration(responseCache: nil, decompressesResponses: false)
        var gzipRequest = request(self.server.url("/gzip"))
        gzipRequest.setValue("gzip", forHTTPHeaderField: "Accept-Encoding")
        let (data, _) = try await URLConnection.data(for: gzipRequest, configuration: configuration)
        #expect(data.prefix(2) == Data([0x1f, 0x8b]))
    }

    @Test func aCorruptCompressedBodyFailsWithCannotDecodeContentData() async throws {
        let delegate = RecordingDelegate()
        try await load(request(self.server.url("/badgzip")), delegate: delegate)
        #expect(delegate.events.last == .failed(.cannotDecodeContentData))
    }

    @Test func a50MiBBodyStreamsToTheDelegateInChunks() async throws {
        let size = 50 << 20
        let delegate = RecordingDelegate()
        delegate.keepsBody = false
        let counter = NSLockedCounter()
        delegate.onData = { _, data in counter.add(data.count, chunk: true) }
        try await load(request(self.server.url("/big?size=\(size)"), timeout: 60), delegate: delegate)
        #expect(delegate.events.last == .finished)
        #expect(counter.total == size)
        #expect(counter.chunks > 10)
        #expect(counter.largestChunk < 8 << 20)
    }

    @Test func anUploadOf5MiBReportsProgressUpToItsLength() async throws {
        let payload = Data((0..<(5 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        var post = request(self.server.url("/echo"), method: "POST")
        post.httpBody = payload
        let delegate = RecordingDelegate()
        try await load(post, delegate: delegate)
        let progress = delegate.events.compactMap { event -> (Int, Int)? in
            if case .sent(let total, let expected) = event { return (total, expected) }
            return nil
        }
        #expect(progress.count > 1)
        #expect(progress.last?.0 == payload.count)
        #expect(progress.allSatisfy { $0.1 == payload.count })
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.0 < $1.0 })
        let echo = try Echo(delegate.body)
        #expect(echo.bodyLength == payload.count)
        #expect(echo.sha256 == Digests.hex(Digests.sha256(Array(payload))))
    }

    @Test func aCallersFramingHeadersDoNotClashWithTheBody() async throws {
        var post = request(self.server.url("/echo"), method: "POST")
        post.httpBody = Data("twelve bytes".utf8)
        post.setValue("12", forHTTPHeaderField: "Content-Length")
        let echo = try Echo(try await URLConnection.data(for: post, configuration: .uncached).0)
        #expect(echo.bodyLength == 12)
        #expect(echo.header("Content-Length") == "12")

        var streamed = request(self.server.url("/echo"), method: "POST")
        streamed.httpBodyStream = InputStream(data: Data(repeating: 1, count: 70_000))
        streamed.setValue("70000", forHTTPHeaderField: "Content-Length")
        let streamedEcho = try Echo(try await URLConnection.data(for: streamed, configuration: .uncached).0)
        #expect(streamedEcho.bodyLength == 70_000)
        #expect(streamedEcho.header("Transfer-Encoding") == nil)
    }

    @Test func aStreamUploadOfUnknownLengthIsSentChunked() async throws {
        let payload = Data(repeating: 0x42, count: 300_000)
        var post = request(self.server.url("/echo"), method: "PUT")
        post.httpBodyStream = InputStream(data: payload)
        let delegate = RecordingDelegate()
        try await load(post, delegate: delegate)
        let echo = try Echo(delegate.body)
        #expect(echo.bodyLength == payload.count)
        #expect(echo.header("Transfer-Encoding") == "chunked")
        #expect(delegate.events.contains(.sent(total: payload.count, expected: -1)))
    }

    // The idle timeout also bounds the wait for a connection and the head: 3 s leaves the connect room on a machine
    // whose cores are all busy (0.5 s did not, under the whole suite beside other builds), and the stall (10 s) still
    // outlasts it.
    @Test func aStalledResponseTimesOut() async throws {
        let delegate = RecordingDelegate()
        try await load(request(self.server.url("/stall?for=10"), timeout: 3), delegate: delegate)
        #expect(delegate.events.last == .failed(.timedOut))
        #expect(delegate.events.contains(.data(7)))
        await #expect(throws: URLError.self) {
            _ = try await URLConnection.data(
                for: request(self.server.url("/stallhead?for=10"), timeout: 3),
                configuration: .uncached
            )
        }
    }

    @Test func bytesThatArrivedBeforeAnIdleTimeoutAreDeliveredBeforeItsError() async throws {
        // The origin sends a head and 7 of 1,000 bytes, then nothing. Between the head and the body the load stores
        // the head's cookie: holding this load there until the idle timeout closed the engine's connection makes it
        // take the body only after the timeout, every time. (Only this load is held: loads of other tests go on.)
        let origin = try await StallingOrigin.start(
            head: "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nSet-Cookie: stalled=1; Path=/stalled-only",
            bodyPrefix: "1234567"
        )
        let (opened, open) = AsyncStream.makeStream(of: Void.self)
        HTTPLoad.cookieStoreWillStart.withLock {
            $0 = { url in
                guard url.path.hasPrefix("/stalled-only") else { return }
                for await _ in opened { break }
            }
        }
        defer { HTTPLoad.cookieStoreWillStart.withLock { $0 = nil } }
        async let didClose = Self.open(open, whenTheClientCloses: origin)
        let delegate = RecordingDelegate()
        try await load(request(origin.url("/stalled-only/body"), timeout: 3), delegate: delegate)
        #expect(await didClose, "the idle timeout closes the engine's connection while the load waits")
        #expect(delegate.events.contains(.data(7)))
        #expect(delegate.events.last == .failed(.timedOut))
        await origin.stop()
    }

    /// Lets the held load go once `origin`'s client closed its connection (or after a hang guard); returns whether it
    /// did.
    private static func open(
        _ gate: AsyncStream<Void>.Continuation,
        whenTheClientCloses origin: StallingOrigin
    ) async -> Bool {
        let didClose = await origin.waitForClientClose(limit: .seconds(5))
        gate.finish()
        return didClose
    }

    @Test func dataForTimesOutOnAStalledBody() async throws {
        // The load's idle watchdog (a NIO scheduled task) ends it.
        let started = ContinuousClock.now
        do {
            _ = try await URLConnection.data(
                for: request(self.server.url("/stall?for=10"), timeout: 0.5),
                configuration: .uncached
            )
            Issue.record("expected a timeout")
        } catch let error as URLError {
            #expect(error.code == .timedOut)
            #expect(error.failingURL == self.server.url("/stall?for=10"))
        }
        // A hang guard, not a timing assertion: the stall lasts 10 s.
        #expect(ContinuousClock.now - started < .seconds(8))
    }

    @Test func loadsWithDistinctTimeoutsOnOneEngineEachTimeOut() async throws {
        // Timeouts are per load, not per engine: ten distinct ones run on the one shared engine.
        try await withThrowingTaskGroup(of: URLError.Code?.self) { group in
            for step in 0..<10 {
                let timeout = 0.5 + Double(step) * 0.01
                group.addTask {
                    do {
                        _ = try await URLConnection.data(
                            for: request(self.server.url("/stallhead?for=10"), timeout: timeout),
                            configuration: .uncached
                        )
                        return nil
                    } catch let error as URLError {
                        return error.code
                    }
                }
            }
            for try await code in group { #expect(code == .timedOut) }
        }
        let (data, _) = try await URLConnection.data(
            for: request(self.server.url("/slow?n=3&delay=0.05"), timeout: 0.77),
            configuration: .uncached
        )
        #expect(data.count == 3)
    }

    @Test func aSlowButSteadyResponseDoesNotTimeOut() async throws {
        let (data, _) = try await URLConnection.data(
            for: request(self.server.url("/slow?n=25&delay=0.1"), timeout: 2),
            configuration: .uncached
        )
        #expect(data == Data(repeating: UInt8(ascii: "x"), count: 25))
    }

    @Test func bodiesOverTheLimitFailWithDataLengthExceedsMaximum() async throws {
        let configuration = URLConnection.Configuration(responseCache: nil, maximumResponseBodySize: 1000)
        do {
            _ = try await URLConnection.data(
                for: request(self.server.url("/big?size=5000")),
                configuration: configuration
            )
            Issue.record("expected a failure")
        } catch let error as URLError {
            #expect(error.code == .dataLengthExceedsMaximum)
        }
        do {
            _ = try await URLConnection.data(
                for: request(self.server.url("/chunked?n=200")),
                configuration: configuration
            )
            Issue.record("expected a failure")
        } catch let error as URLError {
            #expect(error.code == .dataLengthExceedsMaximum)
        }
    }

    /// The delegate face's load runs on the engine's event loop and stores cookies off it; the redirect's next hop
    /// must still carry the cookie its 3xx set.
    @Test func aCookieSetByARedirectIsSentOnTheNextHop() async throws {
        let name = "r\(UInt32.random(in: 0...UInt32.max))"
        let delegate = RecordingDelegate()
        try await load(
            request(self.server.url("/setcookie?name=\(name)&value=v2&then=/echo")),
            delegate: delegate
        )
        let echo = try Echo(delegate.body)
        #expect(echo.path == "/echo")
        #expect(echo.header("Cookie")?.contains("\(name)=v2") == true)
    }

    @Test func cookiesAreStoredAndSentBack() async throws {
        let name = "c\(UInt32.random(in: 0...UInt32.max))"
        _ = try await URLConnection.data(
            for: request(self.server.url("/setcookie?name=\(name)&value=v1")),
            configuration: .uncached
        )
        let echo = try Echo(
            try await URLConnection.data(for: request(self.server.url("/echo")), configuration: .uncached).0
        )
        #expect(echo.header("Cookie")?.contains("\(name)=v1") == true)
        var noCookies = request(self.server.url("/echo"))
        noCookies.httpShouldHandleCookies = false
        let bare = try Echo(try await URLConnection.data(for: noCookies, configuration: .uncached).0)
        #expect(bare.header("Cookie")?.contains(name) != true)
    }
}

/// Counts bytes and chunks reported from any thread.
final class NSLockedCounter: Sendable {
    private let counts = LockedBox((sum: 0, count: 0, largest: 0))

    func add(_ bytes: Int, chunk: Bool) {
        self.counts.withLock { counts in
            counts.sum += bytes
            counts.count += 1
            counts.largest = max(counts.largest, bytes)
        }
    }

    var total: Int { self.counts.withLock { $0.sum } }
    var chunks: Int { self.counts.withLock { $0.count } }
    var largestChunk: Int { self.counts.withLock { $0.largest } }
}
