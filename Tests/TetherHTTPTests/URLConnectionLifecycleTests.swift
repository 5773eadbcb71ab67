import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing
import TetherConcurrency

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct URLConnectionLifecycleTests {
    let server: TestServer

    init() async throws {
        server = try await TestServer.http()
    }

    /// A data delegate that implements nothing but the end of the load.
    final class EndOnlyDelegate: URLConnectionDataDelegate, Sendable {
        let done = Signal<Bool>()
        func connectionDidFinishLoading(_ connection: URLConnection) { self.done.fulfil(true) }
        func connection(_ connection: URLConnection, didFailWithError error: any Error) { self.done.fulfil(false) }
    }

    /// The canonical `willSend` of a delegate type that keeps the default is asked once; later loads of that type
    /// start without a round trip to the delegate queue, so the request goes out while that queue is suspended.
    @Test func aDelegateTypeWithTheDefaultWillSendIsNotWaitedForBeforeTheRequestGoesOut() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        func start(_ delegate: EndOnlyDelegate, _ path: String) {
            startedConnection(self.server.url(path), delegate: delegate, on: queue)
        }
        let first = EndOnlyDelegate()
        start(first, "/hello")
        #expect(try await first.done.wait())
        #expect(DefaultWillSend.isDefault(for: EndOnlyDelegate.self))
        #expect(!DefaultWillSend.isDefault(for: RecordingDelegate.self))

        let path = "/hello/\(UInt32.random(in: 0...UInt32.max))"
        queue.isSuspended = true
        let second = EndOnlyDelegate()
        start(second, path)
        var served = 0
        for _ in 0..<200 where served == 0 {
            served = try await self.server.counts()["path:\(path)"] ?? 0
            if served == 0 { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(served == 1, "the request did not go out while the delegate queue was suspended")
        #expect(second.done.current == nil)
        queue.isSuspended = false
        #expect(try await second.done.wait())
    }

    /// A data delegate whose canonical `willSend` marks each request it is asked about.
    // Sendable: its vars are touched only in delegate calls, which never overlap; the test reads them after the end.
    final class MarkingDelegate: URLConnectionDataDelegate, @unchecked Sendable {
        let done = Signal<Data?>()
        private var body = Data()
        private(set) var asked = 0

        func connection(
            _ connection: URLConnection,
            willSend request: URLRequest,
            redirectResponse response: URLResponse?
        ) -> URLRequest? {
            self.asked += 1
            var marked = request
            marked.setValue("asked-\(self.asked)", forHTTPHeaderField: "X-Marked")
            return marked
        }

        func connection(_ connection: URLConnection, didReceive data: Data) { self.body.append(data) }
        func connectionDidFinishLoading(_ connection: URLConnection) { self.done.fulfil(self.body) }
        func connection(_ connection: URLConnection, didFailWithError error: any Error) { self.done.fulfil(nil) }
    }

    /// Skipping the round trip is only for types that keep the default: a delegate type with its own `willSend` is
    /// asked before every load, also after a default type was seen, and each request goes out as it answered.
    @Test func aDelegateTypeWithItsOwnWillSendIsAskedBeforeEveryLoad() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let plain = EndOnlyDelegate()
        startedConnection(self.server.url("/hello"), delegate: plain, on: queue)
        #expect(try await plain.done.wait())
        #expect(DefaultWillSend.isDefault(for: EndOnlyDelegate.self))

        for _ in 0..<2 {
            let delegate = MarkingDelegate()
            startedConnection(self.server.url("/echo"), delegate: delegate, on: queue)
            let body = try #require(try await delegate.done.wait())
            #expect(delegate.asked == 1)
            #expect(try Echo(body).header("X-Marked") == "asked-1")
        }
        #expect(!DefaultWillSend.isDefault(for: MarkingDelegate.self))
    }

    /// A connection holds itself (through its load and its delivery) only until its load ends: once finished, failed
    /// or cancelled, and no longer held by its creator, it is freed.
    @Test func finishedFailedAndCancelledConnectionsAreFreed() async throws {
        // Sendable: only the test's task sets and reads `value`; the runtime zeroes a weak reference atomically.
        final class WeakConnection: @unchecked Sendable {
            weak var value: URLConnection?
        }
        let queue = OperationQueue()
        let refused = URL(string: "http://127.0.0.1:\(try closedPort())/")!
        var freedChecks: [(String, WeakConnection)] = []
        for (name, url, cancels) in [
            ("finished", self.server.url("/hello"), false), ("failed", refused, false),
            ("cancelled", self.server.url("/hello"), true),
        ] {
            let delegate = EndOnlyDelegate()
            let weak = WeakConnection()
            do {
                let connection = startedConnection(url, delegate: delegate, on: queue)
                weak.value = connection
                if cancels { connection.cancel() }
            }
            if !cancels { _ = try await delegate.done.wait() }
            freedChecks.append((name, weak))
        }
        // The last references go on the engine's loop and the delegate queue, just after the terminal call.
        for (name, weak) in freedChecks {
            var waited = 0
            while weak.value != nil, waited < 100 {
                try await Task.sleep(for: .milliseconds(50))
                waited += 1
            }
            #expect(weak.value == nil, "the \(name) connection was not freed")
        }
    }

    @Test func cancelFromInsideDidReceiveResponseSilencesTheConnection() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let delegate = RecordingDelegate()
        let cancelled = Signal<Bool>()
        delegate.onResponse = { connection, _ in
            connection.cancel()
            cancelled.fulfil(true)
        }
        startedConnection(self.server.url("/big?size=2000000"), delegate: delegate, on: queue)
        _ = try await cancelled.wait()
        // A second load on the same serial queue is the barrier: anything the first would still deliver
        // would have been queued before its finish.
        let barrier = RecordingDelegate()
        try await load(request(self.server.url("/big?size=2000000")), delegate: barrier, queue: queue)
        #expect(delegate.mainEvents.count == 2)
        #expect(delegate.done.current == nil)
    }

    @Test func cancelBeforeStartMeansNothingIsEverDelivered() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let delegate = RecordingDelegate()
        let connection = URLConnection(
            request: request(self.server.url("/hello")),
            delegate: delegate,
            startImmediately: false,
            configuration: .uncached
        )!
        connection.setDelegateQueue(queue)
        connection.cancel()
        connection.start()
        try await load(request(self.server.url("/hello")), delegate: RecordingDelegate(), queue: queue)
        #expect(delegate.events.isEmpty)
    }

    @Test func nilFromCanonicalWillSendCancelsSilently() async throws {
        final class Refusing: URLConnectionDataDelegate, Sendable {
            let calls = NSLockedCounter()
            func connection(
                _ connection: URLConnection,
                willSend request: URLRequest,
                redirectResponse response: URLResponse?
            ) -> URLRequest? {
                self.calls.add(1, chunk: true)
                return nil
            }
            func connection(_ connection: URLConnection, didReceive response: URLResponse) {
                self.calls.add(100, chunk: true)
            }
        }
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let delegate = Refusing()
        startedConnection(self.server.url("/hello"), delegate: delegate, on: queue)
        try await load(request(self.server.url("/hello")), delegate: RecordingDelegate(), queue: queue)
        #expect(delegate.calls.total == 1)
    }

    @Test func sendSynchronousRequestBlocksAPlainThreadAndFillsTheResponse() async throws {
        let url = self.server.url("/status/404")
        let result = Signal<UncheckedSendableBox<(Data?, URLResponse?, (any Error)?)>>()
        let thread = Thread {
            var response: URLResponse?
            do {
                let data = try URLConnection.sendSynchronousRequest(URLRequest(url: url), returning: &response)
                result.fulfil(UncheckedSendableBox((data, response, nil)))
            } catch {
                result.fulfil(UncheckedSendableBox((nil, response, error)))
            }
        }
        thread.start()
        let (data, response, error) = try await result.wait().value
        #expect(error == nil)
        #expect((response as? HTTPURLResponse)?.statusCode == 404)
        #expect(data == Data("status 404".utf8))
    }

    @Test func sendSynchronousRequestThrowsURLErrors() async throws {
        let url = URL(string: "http://127.0.0.1:\(try closedPort())/")!
        let result = Signal<UncheckedSendableBox<(any Error)?>>()
        Thread {
            do {
                _ = try URLConnection.sendSynchronousRequest(URLRequest(url: url), returning: nil)
                result.fulfil(UncheckedSendableBox(nil))
            } catch {
                result.fulfil(UncheckedSendableBox(error))
            }
        }.start()
        let error = try await result.wait().value
        #expect((error as? URLError)?.code == .cannotConnectToHost)
    }

    @Test func sendAsynchronousRequestRunsTheHandlerOnTheQueue() async throws {
        let queue = OperationQueue()
        queue.name = "tether-completion-queue"
        let result = Signal<UncheckedSendableBox<(Int?, Data?, Bool)>>()
        URLConnection.sendAsynchronousRequest(URLRequest(url: self.server.url("/hello")), queue: queue) {
            response,
            data,
            error in
            result.fulfil(
                UncheckedSendableBox(
                    ((response as? HTTPURLResponse)?.statusCode, data, OperationQueue.current === queue && error == nil)
                )
            )
        }
        let (status, data, onQueue) = try await result.wait().value
        #expect(status == 200)
        #expect(data == Data("hello".utf8))
        #expect(onQueue)
    }

    @Test func taskCancellationOfDataForThrowsCancelled() async throws {
        let url = self.server.url("/stallhead?for=10")
        let task = Task { try await URLConnection.data(for: request(url), configuration: .uncached) }
        try await Task.sleep(nanoseconds: 100_000_000)
        task.cancel()
        do {
            _ = try await withTimeout(10) { try await task.value }
            Issue.record("expected cancellation")
        } catch let error as URLError {
            #expect(error.code == .cancelled)
            #expect(error.failingURL == url)
        }
    }

    @Test func unsupportedURLsThrowFromDataFor() async throws {
        await expectURLError(.unsupportedURL) {
            _ = try await URLConnection.data(for: URLRequest(url: URL(string: "ftp://127.0.0.1/")!))
        }
    }

    @Test func trustedHTTPSWorksAndUntrustedFails() async throws {
        let tlsServer = try await TestServer.https()
        let trusting = URLConnection.Configuration(
            responseCache: nil,
            tlsConfiguration: try await TestCertificates.shared().trustingConfiguration()
        )
        let (data, _) = try await URLConnection.data(for: request(tlsServer.url("/hello")), configuration: trusting)
        #expect(data == Data("hello".utf8))

        let delegate = RecordingDelegate()
        try await load(request(tlsServer.url("/hello")), delegate: delegate)
        #expect(delegate.events.last == .failed(.serverCertificateUntrusted))
        #expect(delegate.lastError?.userInfo[NSUnderlyingErrorKey] != nil)
    }

    @Test func tlsToAPlainHTTPServerFailsWithSecureConnectionFailed() async throws {
        let url = URL(string: "https://127.0.0.1:\(self.server.port)/hello")!
        await expectURLError(.secureConnectionFailed) {
            _ = try await URLConnection.data(for: request(url, timeout: 10), configuration: .uncached)
        }
    }
}

struct URLConnectionDelegateVariantsTests {
    let server: TestServer

    init() async throws {
        server = try await TestServer.http()
    }

    @Test func aBaseDelegateGetsNoDataCallbacksButTheTerminalOne() async throws {
        final class BaseOnly: URLConnectionDelegate, Sendable {
            let failed = Signal<URLError.Code>()
            func connection(_ connection: URLConnection, didFailWithError error: any Error) {
                self.failed.fulfil((error as? URLError)?.code ?? .unknown)
            }
        }
        let delegate = BaseOnly()
        let queue = OperationQueue()
        startedConnection(
            URL(string: "http://127.0.0.1:\(try closedPort())/")!,
            delegate: delegate,
            on: queue
        )
        #expect(try await delegate.failed.wait() == .cannotConnectToHost)
    }

    @Test func cancelFromInsideDidReceiveDataStopsTheBody() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let delegate = RecordingDelegate()
        let cancelled = Signal<Bool>()
        delegate.onData = { connection, _ in
            connection.cancel()
            cancelled.fulfil(true)
        }
        startedConnection(self.server.url("/big?size=4000000"), delegate: delegate, on: queue)
        _ = try await cancelled.wait()
        try await load(request(self.server.url("/hello")), delegate: RecordingDelegate(), queue: queue)
        let dataEvents = delegate.events.filter { if case .data = $0 { return true } else { return false } }
        #expect(dataEvents.count == 1)
        #expect(delegate.body.count < 4_000_000)
        #expect(delegate.done.current == nil)
    }

    @Test func aFreshCacheHitIsDeliveredLikeANetworkLoad() async throws {
        let cache = HTTPResponseCache()
        let url = self.server.url("/cache/d\(UUID().uuidString.prefix(8))?cc=max-age%3D60")
        try await load(request(url), delegate: RecordingDelegate(), configuration: .init(responseCache: cache))
        let delegate = RecordingDelegate()
        try await load(request(url), delegate: delegate, configuration: .init(responseCache: cache))
        #expect(delegate.mainEvents.count == 4)
        #expect(delegate.mainEvents.last == .finished)
        #expect(String(decoding: delegate.body, as: UTF8.self).hasPrefix("body d"))
    }

    @Test func unscheduledRunLoopsGetNoCalls() async throws {
        let kept = RunLoopThread()
        let dropped = RunLoopThread()
        defer {
            kept.stop()
            dropped.stop()
        }
        let delegate = RecordingDelegate()
        let connection = URLConnection(
            request: request(self.server.url("/chunked?n=30")),
            delegate: delegate,
            startImmediately: false,
            configuration: .uncached
        )!
        connection.schedule(in: dropped.runLoop, forMode: .default)
        connection.schedule(in: kept.runLoop, forMode: .default)
        connection.unschedule(from: dropped.runLoop, forMode: .default)
        connection.start()
        #expect(try await delegate.done.wait())
        #expect(delegate.threads == [kept.threadID])
    }

    @Test func sendSynchronousRequestRefusesToBlockAnEventLoop() async {
        await #expect(processExitsWith: .failure) {
            let url = URL(string: "http://127.0.0.1:9/")!
            try await MultiThreadedEventLoopGroup.singleton.next().submit {
                _ = try? URLConnection.sendSynchronousRequest(URLRequest(url: url), returning: nil)
            }.get()
        }
    }
}

/// A connection to `url` (no cache) that delivers on `queue`, started.
@discardableResult
private func startedConnection(
    _ url: URL,
    delegate: any URLConnectionDelegate,
    on queue: OperationQueue
) -> URLConnection {
    let connection = URLConnection(
        request: request(url),
        delegate: delegate,
        startImmediately: false,
        configuration: .uncached
    )!
    connection.setDelegateQueue(queue)
    connection.start()
    return connection
}
