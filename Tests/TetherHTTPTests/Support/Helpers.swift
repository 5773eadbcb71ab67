import Foundation
import Testing
import TetherConcurrency
import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLConnection.Configuration {
    /// No response cache: every request reaches the server.
    static var uncached: Self { .init(responseCache: nil) }
}

struct TimeoutError: Error {}

/// Expects `body` to throw a `URLError` with `code` (URLError equality would also compare the user info).
func expectURLError(
    _ code: URLError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable () async throws -> Void
) async {
    do {
        try await body()
        Issue.record("expected URLError(\(code.rawValue)), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as URLError {
        #expect(error.code == code, sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected URLError(\(code.rawValue)), got \(error)", sourceLocation: sourceLocation)
    }
}

/// Runs `body`, failing with `TimeoutError` if it takes longer than `seconds` (every test is bounded).
func withTimeout<T: Sendable>(
    _ seconds: Double = 20,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            throw TimeoutError()
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

/// A one-shot signal with a bounded wait: a wait that outlasts its bound throws `TimeoutError` (the waiter answers
/// cancellation, so the bound holds even when the signal never comes).
final class Signal<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiters: [UInt64: CheckedContinuation<Value, any Error>] = [:]
        var lastWaiter: UInt64 = 0
    }

    private let state = LockedBox(State())

    func fulfil(_ value: Value) {
        let waiters: [CheckedContinuation<Value, any Error>] = self.state.withLock { state in
            guard state.value == nil else { return [] }
            state.value = value
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    var current: Value? { self.state.withLock { $0.value } }

    func wait(seconds: Double = 20) async throws -> Value {
        try await withTimeout(seconds) { try await self.waitUntilCancelled() }
    }

    private func waitUntilCancelled() async throws -> Value {
        let id = self.state.withLock { state -> UInt64 in
            state.lastWaiter += 1
            return state.lastWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ready: Result<Value, any Error>? = self.state.withLock { state in
                    if let value = state.value { return .success(value) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            let waiter = self.state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(throwing: CancellationError())
        }
    }
}

/// A data delegate that records every callback in order and can be steered per test.
// Sendable: what it records is in a `LockedBox`; the `on…` hooks and flags are set before the load starts.
final class RecordingDelegate: URLConnectionDataDelegate, @unchecked Sendable {
    enum Event: Equatable, Sendable {
        case willSend(url: String, method: String, redirectStatus: Int?)
        case challenge(method: String, realm: String?, failures: Int)
        case response(status: Int, expectedLength: Int64)
        case data(Int)
        case sent(total: Int, expected: Int)
        case willCache
        case finished
        case failed(URLError.Code)
    }

    private struct Recording {
        var recorded: [Event] = []
        var body = Data()
        var activeCalls = 0
        var overlapped = false
        var threads: Set<ObjectIdentifier> = []
        var lastError: URLError?
        var lastResponse: HTTPURLResponse?
    }

    private let recording = LockedBox(Recording())
    let done = Signal<Bool>()

    var body: Data { self.recording.withLock { $0.body } }
    var overlapped: Bool { self.recording.withLock { $0.overlapped } }
    var threads: Set<ObjectIdentifier> { self.recording.withLock { $0.threads } }
    var lastError: URLError? { self.recording.withLock { $0.lastError } }
    var lastResponse: HTTPURLResponse? { self.recording.withLock { $0.lastResponse } }

    var onRedirect: ((URLRequest, URLResponse) -> URLRequest?)?
    var onChallenge: ((URLConnection, URLAuthenticationChallenge) -> Void)?
    var onResponse: ((URLConnection, URLResponse) -> Void)?
    var onData: ((URLConnection, Data) -> Void)?
    var onNewBodyStream: ((URLRequest) -> InputStream?)?
    var onWillCache: ((CachedURLResponse) -> CachedURLResponse?)?
    var keepsBody = true
    var usesCredentialStorage = true

    func connectionShouldUseCredentialStorage(_ connection: URLConnection) -> Bool { self.usesCredentialStorage }

    var events: [Event] { self.recording.withLock { $0.recorded } }

    private func record(_ event: Event) {
        self.recording.withLock {
            $0.recorded.append(event)
            $0.threads.insert(ObjectIdentifier(Thread.current))
        }
    }

    private func enter() {
        self.recording.withLock {
            $0.activeCalls += 1
            if $0.activeCalls > 1 { $0.overlapped = true }
        }
    }

    private func leave() {
        self.recording.withLock { $0.activeCalls -= 1 }
    }

    func connection(
        _ connection: URLConnection,
        willSend request: URLRequest,
        redirectResponse response: URLResponse?
    )
        -> URLRequest?
    {
        self.enter()
        defer { self.leave() }
        self.record(
            .willSend(
                url: request.url?.absoluteString ?? "",
                method: request.httpMethod ?? "GET",
                redirectStatus: (response as? HTTPURLResponse)?.statusCode
            )
        )
        if let response, let onRedirect { return onRedirect(request, response) }
        return request
    }

    func connection(_ connection: URLConnection, willSendRequestFor challenge: URLAuthenticationChallenge) {
        self.enter()
        defer { self.leave() }
        self.record(
            .challenge(
                method: challenge.protectionSpace.authenticationMethod,
                realm: challenge.protectionSpace.realm,
                failures: challenge.previousFailureCount
            )
        )
        if let onChallenge {
            onChallenge(connection, challenge)
        } else {
            connection.answer(challenge, with: .performDefaultHandling)
        }
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        self.enter()
        defer { self.leave() }
        let http = response as? HTTPURLResponse
        self.recording.withLock { $0.lastResponse = http }
        self.record(.response(status: http?.statusCode ?? 0, expectedLength: response.expectedContentLength))
        self.onResponse?(connection, response)
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        self.enter()
        defer { self.leave() }
        let keepsBody = self.keepsBody
        self.recording.withLock { recording in
            if keepsBody { recording.body.append(data) }
            if case .data(let count) = recording.recorded.last {
                recording.recorded[recording.recorded.count - 1] = .data(count + data.count)
            } else {
                recording.recorded.append(.data(data.count))
            }
        }
        self.onData?(connection, data)
    }

    func connection(
        _ connection: URLConnection,
        didSendBodyData bytesWritten: Int,
        totalBytesWritten: Int,
        totalBytesExpectedToWrite: Int
    ) {
        self.record(.sent(total: totalBytesWritten, expected: totalBytesExpectedToWrite))
    }

    func connection(_ connection: URLConnection, needNewBodyStream request: URLRequest) -> InputStream? {
        self.onNewBodyStream?(request)
    }

    func connection(
        _ connection: URLConnection,
        willCacheResponse cachedResponse: CachedURLResponse
    )
        -> CachedURLResponse?
    {
        self.record(.willCache)
        if let onWillCache { return onWillCache(cachedResponse) }
        return cachedResponse
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        self.record(.finished)
        self.done.fulfil(true)
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        let urlError = error as? URLError
        self.recording.withLock { $0.lastError = urlError }
        self.record(.failed(urlError?.code ?? .unknown))
        self.done.fulfil(false)
    }

    /// Events without the upload-progress entries.
    var mainEvents: [Event] {
        self.events.filter {
            if case .sent = $0 { return false }
            return true
        }
    }
}

/// Starts `request` on a serial delegate queue and waits for the terminal callback.
@discardableResult
func load(
    _ request: URLRequest,
    delegate: RecordingDelegate,
    configuration: URLConnection.Configuration = .uncached,
    queue: OperationQueue? = nil
) async throws -> URLConnection {
    let connection = URLConnection(
        request: request,
        delegate: delegate,
        startImmediately: false,
        configuration: configuration
    )!
    let queue =
        queue
        ?? {
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            return queue
        }()
    connection.setDelegateQueue(queue)
    connection.start()
    _ = try await delegate.done.wait()
    return connection
}

func request(_ url: URL, method: String = "GET", timeout: TimeInterval = 20) -> URLRequest {
    var request = URLRequest(url: url, cachePolicy: .useProtocolCachePolicy, timeoutInterval: timeout)
    request.httpMethod = method
    return request
}

/// Decodes the `/echo` route's JSON.
struct Echo: Decodable {
    var method: String
    var path: String
    var headers: [String: String]
    var bodyLength: Int
    var sha256: String

    init(_ data: Data) throws { self = try JSONDecoder().decode(Echo.self, from: data) }

    func header(_ name: String) -> String? {
        self.headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
