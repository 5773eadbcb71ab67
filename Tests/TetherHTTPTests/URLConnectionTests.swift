import Foundation
import NIOCore
import NIOPosix
import Testing
import TetherConcurrency

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct URLConnectionTests {
    let server: TestServer

    init() async throws {
        server = try await TestServer.http()
    }

    @Test func loadDeliversCanonicalWillSendResponseDataAndFinishInOrder() async throws {
        let delegate = RecordingDelegate()
        let url = self.server.url("/hello")
        try await load(request(url), delegate: delegate)
        #expect(
            delegate.mainEvents == [
                .willSend(url: url.absoluteString, method: "GET", redirectStatus: nil),
                .response(status: 200, expectedLength: 5),
                .data(5),
                .finished,
            ]
        )
        #expect(String(decoding: delegate.body, as: UTF8.self) == "hello")
    }

    @Test func callsNeverOverlapOnAConcurrentDelegateQueue() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 8
        let delegate = RecordingDelegate()
        try await load(request(self.server.url("/chunked?n=50")), delegate: delegate, queue: queue)
        #expect(!delegate.overlapped)
        #expect(String(decoding: delegate.body, as: UTF8.self).hasPrefix("chunk-0;chunk-1;"))
        #expect(delegate.events.last == .finished)
    }

    @Test func deliversOnAScheduledRunLoop() async throws {
        let runLoopThread = RunLoopThread()
        defer { runLoopThread.stop() }
        let delegate = RecordingDelegate()
        let connection = URLConnection(
            request: request(self.server.url("/hello")),
            delegate: delegate,
            startImmediately: false,
            configuration: .uncached
        )!
        connection.schedule(in: runLoopThread.runLoop, forMode: .default)
        connection.start()
        #expect(try await delegate.done.wait())
        #expect(delegate.threads == [runLoopThread.threadID])
    }

    /// An app's main thread: its run loop runs until a distant date and only its sources wake it. The delegate
    /// calls must wake it themselves (`RunLoop.perform` alone did not: the load never finished).
    @Test(.timeLimit(.minutes(1))) func deliversOnARunLoopThatWaitsUntilADistantDate() async throws {
        let main = DistantRunLoopThread.shared
        for path in ["/hello", "/chunked?n=20"] {
            let delegate = RecordingDelegate()
            let connection = URLConnection(
                request: request(self.server.url(path)),
                delegate: delegate,
                startImmediately: false,
                configuration: .uncached
            )!
            connection.schedule(in: main.runLoop.value, forMode: .default)
            connection.start()
            #expect(try await delegate.done.wait())
            #expect(delegate.threads == [main.threadID])
            #expect(delegate.events.last == .finished)
        }
    }

    @Test func callsScheduledOnTwoRunLoopsRunOnceEachInOrderWithoutOverlap() async throws {
        let first = RunLoopThread()
        let second = RunLoopThread()
        defer {
            first.stop()
            second.stop()
        }
        let delegate = RecordingDelegate()
        let connection = URLConnection(
            request: request(self.server.url("/chunked?n=100")),
            delegate: delegate,
            startImmediately: false,
            configuration: .uncached
        )!
        connection.schedule(in: first.runLoop, forMode: .default)
        connection.schedule(in: second.runLoop, forMode: .default)
        connection.start()
        #expect(try await delegate.done.wait())
        #expect(!delegate.overlapped)
        #expect(delegate.threads.isSubset(of: [first.threadID, second.threadID]))
        #expect(String(decoding: delegate.body, as: UTF8.self) == (0..<100).map { "chunk-\($0);" }.joined())
        #expect(delegate.events.filter { $0 == .finished }.count == 1)
    }

    @Test func defaultsToTheRunLoopOfTheCreatingThread() async throws {
        let runLoopThread = RunLoopThread()
        defer { runLoopThread.stop() }
        let delegate = RecordingDelegate()
        let url = self.server.url("/hello")
        let holder = Signal<UncheckedSendableBox<URLConnection>>()
        runLoopThread.runLoop.perform {
            let connection = URLConnection(request: request(url), delegate: delegate)!
            holder.fulfil(UncheckedSendableBox(connection))
        }
        _ = try await holder.wait()
        #expect(try await delegate.done.wait())
        #expect(delegate.threads == [runLoopThread.threadID])
    }

    @Test func canHandleOnlyHTTPURLsWithAHost() {
        #expect(URLConnection.canHandle(URLRequest(url: URL(string: "http://example.com/")!)))
        #expect(URLConnection.canHandle(URLRequest(url: URL(string: "HTTPS://example.com")!)))
        #expect(!URLConnection.canHandle(URLRequest(url: URL(string: "ftp://example.com/")!)))
        #expect(!URLConnection.canHandle(URLRequest(url: URL(string: "http:///nohost")!)))
        #expect(URLConnection(request: URLRequest(url: URL(string: "file:///tmp/x")!), delegate: nil) == nil)
        // The scheme is matched without case, and exactly: no prefix or extension of it passes.
        for scheme in ["HtTp", "hTTPs"] {
            #expect(URLConnection.canHandle(URLRequest(url: URL(string: "\(scheme)://example.com/")!)))
        }
        for scheme in ["htt", "httpx", "httpss", "xhttp", "ws"] {
            #expect(!URLConnection.canHandle(URLRequest(url: URL(string: "\(scheme)://example.com/")!)))
        }
        // Hosts: IPv6 literals and percent-encoded names are hosts; a port alone is not.
        #expect(URLConnection.canHandle(URLRequest(url: URL(string: "http://[::1]:8080/")!)))
        #expect(URLConnection.canHandle(URLRequest(url: URL(string: "http://ex%61mple.com/")!)))
        if let portOnly = URL(string: "http://:8080/") {
            #expect(!URLConnection.canHandle(URLRequest(url: portOnly)))
        }
        var noURL = URLRequest(url: URL(string: "http://example.com/")!)
        noURL.url = nil
        #expect(!URLConnection.canHandle(noURL))
    }

    @Test func methodsAreUppercasedOnlyWhenNeeded() {
        var request = URLRequest(url: URL(string: "http://example.com/")!)
        request.httpMethod = nil
        #expect(HTTPLoad.method(of: request) == "GET")
        request.httpMethod = "post"
        #expect(HTTPLoad.method(of: request) == "POST")
        request.httpMethod = "PROPFIND"
        #expect(HTTPLoad.method(of: request) == "PROPFIND")
        request.httpMethod = "Delete"
        #expect(HTTPLoad.method(of: request) == "DELETE")
    }

    @Test func httpErrorStatusesAreResponsesNotErrors() async throws {
        for status in [404, 503] {
            let (data, response) = try await URLConnection.data(
                for: request(self.server.url("/status/\(status)")),
                configuration: .uncached
            )
            #expect((response as? HTTPURLResponse)?.statusCode == status)
            #expect(String(decoding: data, as: UTF8.self) == "status \(status)")
        }
    }

    @Test func refusedConnectionFailsWithCannotConnectToHostAndTheFailingURL() async throws {
        let url = URL(string: "http://127.0.0.1:\(try closedPort())/x")!
        let delegate = RecordingDelegate()
        try await load(request(url), delegate: delegate)
        #expect(delegate.events.last == .failed(.cannotConnectToHost))
        #expect(delegate.lastError?.failingURL == url)
        #expect(delegate.lastError?.userInfo["NSErrorFailingURLStringKey"] as? String == url.absoluteString)
    }

    @Test func resetMidBodyFailsWithNetworkConnectionLost() async throws {
        let delegate = RecordingDelegate()
        try await load(request(self.server.url("/reset")), delegate: delegate)
        #expect(delegate.events.last == .failed(.networkConnectionLost))
        #expect(delegate.events.contains(.response(status: 200, expectedLength: 100_000)))
    }
}

/// A thread that runs its run loop until stopped.
// Sendable: its state is in a `LockedBox`; the run loop is only used through its thread-safe `perform` entry points.
final class RunLoopThread: @unchecked Sendable {
    private struct State {
        var isStopped = false
        var loop: RunLoop?
        var thread: ObjectIdentifier?
    }

    private let ready = DispatchSemaphore(value: 0)
    private let state = LockedBox(State())
    let name = "tether-runloop-\(UUID().uuidString.prefix(8))"

    init() {
        let thread = Thread { [self] in
            let runLoop = RunLoop.current
            self.state.withLock { $0.thread = ObjectIdentifier(Thread.current) }
            // A timer keeps the run loop alive (it returns at once without sources on Linux).
            let keepAlive = Timer(timeInterval: 3600, repeats: true) { _ in }
            runLoop.add(keepAlive, forMode: .default)
            self.state.withLock { $0.loop = runLoop }
            self.ready.signal()
            while !self.state.withLock({ $0.isStopped }) {
                _ = runLoop.run(mode: .default, before: Date(timeIntervalSinceNow: 0.05))
            }
            keepAlive.invalidate()
        }
        thread.name = self.name
        thread.start()
        self.ready.wait()
    }

    var runLoop: RunLoop { self.state.withLock { $0.loop! } }
    var threadID: ObjectIdentifier { self.state.withLock { $0.thread! } }

    func stop() {
        self.state.withLock { $0.isStopped = true }
    }
}

/// A thread whose run loop runs until a distant date, as an app's main thread does, for the whole test process:
/// nothing but its sources wakes it (no polling), and it is never stopped.
final class DistantRunLoopThread: Sendable {
    static let shared = DistantRunLoopThread()

    // Sendable: the run loop is only handed to thread-safe entry points off its thread.
    let runLoop: UncheckedSendableBox<RunLoop>
    let threadID: ObjectIdentifier

    private init() {
        let ready = DispatchSemaphore(value: 0)
        let found = LockedBox<(UncheckedSendableBox<RunLoop>, ObjectIdentifier)?>(nil)
        let thread = Thread {
            let runLoop = RunLoop.current
            // A timer that never fires keeps the run loop waiting (it returns at once without sources on Linux).
            runLoop.add(Timer(timeInterval: 1e9, repeats: true) { _ in }, forMode: .default)
            found.withLock { $0 = (UncheckedSendableBox(runLoop), ObjectIdentifier(Thread.current)) }
            ready.signal()
            while true { _ = runLoop.run(mode: .default, before: .distantFuture) }
        }
        thread.name = "tether-distant-run-loop"
        thread.start()
        ready.wait()
        (runLoop, threadID) = found.withLock { $0! }
    }
}
