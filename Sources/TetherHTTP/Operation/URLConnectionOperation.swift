public import Foundation
import TetherConcurrency

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// An `Operation` that runs one ``URLConnection`` and collects its body: the seed's wrapper, done right.
///
/// `start()` returns at once; the connection delivers to an internal serial queue, so the operation works on any
/// `OperationQueue` (with any concurrency limit) without a private run-loop thread. `isExecuting` and
/// `isFinished` are KVO-compliant; `completionBlock` runs after `isFinished` turned true.
///
/// Threads: the connection's delegate (internal to the operation) runs only on the operation's private serial
/// queue. Every property and method is thread-safe; KVO notices are posted on the thread that starts, cancels or
/// finishes the operation (the finish comes from the private queue).
///
/// ```swift
/// let operation = URLConnectionOperation(request: request)
/// operation.completionBlock = { print(operation.responseData?.count ?? 0) }
/// queue.addOperation(operation)
/// ```
public final class URLConnectionOperation: Operation {
    private struct State {
        var isExecuting = false
        var isFinished = false
        var responseData: Data?
        var response: URLResponse?
        var error: (any Error)?
        var connection: URLConnection?
        var collector: OperationCollector?
    }

    private let state = LockedBox(State())
    private let configuration: URLConnection.Configuration
    private let deliveryQueue: OperationQueue

    /// The request the operation loads.
    public let request: URLRequest

    /// Creates an operation for `request`.
    ///
    /// - Parameters:
    ///   - request: The request to load.
    ///   - configuration: The engine settings; bodies over `maximumResponseBodySize` fail.
    public init(request: URLRequest, configuration: URLConnection.Configuration = .default) {
        self.request = request
        self.configuration = configuration
        self.deliveryQueue = OperationQueue()
        self.deliveryQueue.maxConcurrentOperationCount = 1
        self.deliveryQueue.name = "tether.URLConnectionOperation"
        super.init()
    }

    /// The body (the seed's `buffer`); set before `isFinished` turns true.
    public var responseData: Data? { self.state.withLock { $0.responseData } }

    /// The response, once received.
    public var response: URLResponse? { self.state.withLock { $0.response } }

    /// The error, if the load failed or was cancelled (`URLError(.cancelled)`).
    public var error: (any Error)? { self.state.withLock { $0.error } }

    /// The block to run once the operation finished; let go of once it has begun, as on Apple's platforms
    /// (swift-corelibs-foundation's `Operation` keeps it), so a block that uses its own operation does not keep the
    /// operation alive.
    public override var completionBlock: (@Sendable () -> Void)? {
        get { super.completionBlock }
        set {
            guard let newValue else {
                super.completionBlock = nil
                return
            }
            super.completionBlock = { [weak self] in
                self?.completionBlock = nil
                newValue()
            }
        }
    }

    /// Always true: the operation runs its connection without blocking `start()`.
    public override var isAsynchronous: Bool { true }

    /// Whether the load runs (KVO key `isExecuting`).
    public override var isExecuting: Bool { self.state.withLock { $0.isExecuting } }

    /// Whether the operation ended (KVO key `isFinished`).
    public override var isFinished: Bool { self.state.withLock { $0.isFinished } }

    /// Starts the connection and returns at once.
    public override func start() {
        if self.isCancelled {
            self.finish(response: nil, data: nil, error: URLError.tether(.cancelled, url: self.request.url))
            return
        }
        guard self.state.withLock({ !$0.isExecuting && !$0.isFinished }) else { return }
        let collector = OperationCollector(operation: self, limit: self.configuration.maximumResponseBodySize)
        guard
            let connection = URLConnection(
                request: self.request,
                delegate: collector,
                startImmediately: false,
                configuration: self.configuration
            )
        else {
            let code: URLError.Code = self.request.url == nil ? .badURL : .unsupportedURL
            self.finish(response: nil, data: nil, error: URLError.tether(code, url: self.request.url))
            return
        }
        connection.setDelegateQueue(self.deliveryQueue)
        self.willChangeValue(forKey: "isExecuting")
        self.state.withLock {
            $0.isExecuting = true
            $0.connection = connection
            $0.collector = collector
        }
        self.didChangeValue(forKey: "isExecuting")
        // A `cancel()` that ran between the check above and the connection being stored did not see it: it is
        // seen here (`cancel()` marks the operation before it looks for the connection).
        if self.isCancelled {
            connection.cancel()
            self.finish(response: nil, data: nil, error: URLError.tether(.cancelled, url: self.request.url))
            return
        }
        connection.start()
    }

    /// Cancels the connection, then finishes with `URLError(.cancelled)`.
    public override func cancel() {
        super.cancel()
        let connection = self.state.withLock { $0.isExecuting ? $0.connection : nil }
        guard let connection else { return }
        connection.cancel()
        self.finish(response: self.response, data: nil, error: URLError.tether(.cancelled, url: self.request.url))
    }

    /// Ends the operation once: stores the outcome, then flips `isExecuting`/`isFinished` with KVO notices.
    func finish(response: URLResponse?, data: Data?, error: (any Error)?) {
        let (wasExecuting, alreadyFinished) = self.state.withLock { state -> (Bool, Bool) in
            if state.isFinished { return (state.isExecuting, true) }
            state.response = response ?? state.response
            state.responseData = data
            state.error = error
            state.connection = nil
            state.collector = nil
            return (state.isExecuting, false)
        }
        guard !alreadyFinished else { return }
        if wasExecuting { self.willChangeValue(forKey: "isExecuting") }
        self.willChangeValue(forKey: "isFinished")
        self.state.withLock {
            $0.isExecuting = false
            $0.isFinished = true
        }
        self.didChangeValue(forKey: "isFinished")
        if wasExecuting { self.didChangeValue(forKey: "isExecuting") }
    }
}

// Sendable: its state (with the non-Sendable collector) is in a `LockedBox`, used only under its lock; `Operation`'s
// own state is thread-safe.
extension URLConnectionOperation: @unchecked Sendable {}

/// The operation's connection delegate; runs on the operation's serial delivery queue.
final class OperationCollector: URLConnectionDataDelegate {
    private weak var operation: URLConnectionOperation?
    private let limit: Int
    private var response: URLResponse?
    private var body = Data()

    init(operation: URLConnectionOperation, limit: Int) {
        self.operation = operation
        self.limit = limit
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        self.response = response
        self.body = Data()
        if response.expectedContentLength > Int64(self.limit) { self.fail(connection, response: response) }
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        if self.body.count + data.count > self.limit {
            self.fail(connection, response: self.response)
            return
        }
        self.body.append(data)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        self.operation?.finish(response: self.response, data: self.body, error: nil)
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        self.operation?.finish(response: self.response, data: nil, error: error)
    }

    private func fail(_ connection: URLConnection, response: URLResponse?) {
        connection.cancel()
        self.operation?.finish(
            response: response,
            data: nil,
            error: URLError.tether(.dataLengthExceedsMaximum, url: response?.url ?? connection.originalRequest.url)
        )
    }
}
