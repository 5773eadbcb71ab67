public import Foundation
import NIOCore
import NIOPosix
import TetherConcurrency

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

extension URLConnection {
    /// Loads `request` and blocks the calling thread until the body arrived. Follows redirects and answers
    /// challenges by default handling.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - response: Receives the response (also for 4xx/5xx), or nil when there is none.
    ///   - configuration: The engine settings (default ``Configuration/default``); bodies over
    ///     `maximumResponseBodySize` fail.
    /// - Returns: The body.
    /// - Throws: `URLError` with the failing URL attached.
    /// - Precondition: Not called on an event-loop thread.
    @available(*, noasync, message: "Use URLConnection.data(for:) from async code")
    public static func sendSynchronousRequest(
        _ request: URLRequest,
        returning response: UnsafeMutablePointer<URLResponse?>?,
        configuration: Configuration = .default
    ) throws -> Data {
        precondition(
            MultiThreadedEventLoopGroup.currentEventLoop == nil,
            "URLConnection.sendSynchronousRequest must not block an event-loop thread"
        )
        let semaphore = DispatchSemaphore(value: 0)
        let outcome = LockedBox<LoadOutcome?>(nil)
        let observer = CollectingObserver(limit: configuration.maximumResponseBodySize) { result in
            outcome.withLock { $0 = result }
            semaphore.signal()
        }
        HTTPLoad(request: request, configuration: configuration, observer: observer).start()
        semaphore.wait()
        let result = outcome.withLock { $0 }!
        response?.pointee = result.response
        if let error = result.error { throw error }
        return result.data ?? Data()
    }

    /// Loads `request` in the background and runs `handler` on `queue` with `(response, data, nil)` or
    /// `(response?, nil, error)`.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - queue: The queue for the handler.
    ///   - configuration: The engine settings (default ``Configuration/default``); bodies over
    ///     `maximumResponseBodySize` fail.
    ///   - handler: Receives the response, the body or the error.
    public static func sendAsynchronousRequest(
        _ request: URLRequest,
        queue: OperationQueue,
        configuration: Configuration = .default,
        completionHandler handler: @escaping @Sendable (URLResponse?, Data?, (any Error)?) -> Void
    ) {
        // Sendable: OperationQueue's `addOperation` is thread-safe; nothing else is called on it.
        let queueBox = UncheckedSendableBox(queue)
        let observer = CollectingObserver(limit: configuration.maximumResponseBodySize) { result in
            // Sendable: the outcome is handed over whole and only read by the handler.
            let boxed = UncheckedSendableBox(result)
            queueBox.value.addOperation { handler(boxed.value.response, boxed.value.data, boxed.value.error) }
        }
        HTTPLoad(request: request, configuration: configuration, observer: observer).start()
    }

    /// Loads `request` and returns the body and the response (also for 4xx/5xx).
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - configuration: The engine settings; bodies over `maximumResponseBodySize` fail.
    /// - Returns: The body and the response.
    /// - Throws: `URLError` with the failing URL attached; task cancellation throws `URLError(.cancelled)`.
    public static func data(
        for request: URLRequest,
        configuration: Configuration = .default
    ) async throws -> (
        Data, URLResponse
    ) {
        let outcome = try await collect(request, configuration: configuration, metrics: false)
        return (outcome.data ?? Data(), outcome.response)
    }

    /// Loads `request` as ``data(for:configuration:)`` does, and returns its metrics too.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - configuration: The engine settings; bodies over `maximumResponseBodySize` fail.
    /// - Returns: The body, the response and the load's ``URLConnectionMetrics``.
    /// - Throws: As ``data(for:configuration:)``.
    public static func dataAndMetrics(
        for request: URLRequest,
        configuration: Configuration = .default
    ) async throws -> (Data, URLResponse, URLConnectionMetrics) {
        let outcome = try await collect(request, configuration: configuration, metrics: true)
        guard let metrics = outcome.metrics else { throw URLError.tether(.badServerResponse, url: request.url) }
        return (outcome.data ?? Data(), outcome.response, metrics)
    }

    /// Runs a collecting load in a task of its own; the caller's cancellation cancels it.
    /// - Throws: the load's error.
    private static func collect(
        _ request: URLRequest,
        configuration: Configuration,
        metrics: Bool
    ) async throws -> (data: Data?, response: URLResponse, metrics: URLConnectionMetrics?) {
        let promise = OutcomePromise()
        let observer = CollectingObserver(limit: configuration.maximumResponseBodySize, collectsMetrics: metrics) {
            promise.fulfil($0)
        }
        let load = HTTPLoad(request: request, configuration: configuration, observer: observer)
        // The load's jobs run where the engine resumes them, not on another thread and back.
        load.preferEngineLoops()
        let outcome = await withTaskCancellationHandler {
            load.start()
            return await promise.value()
        } onCancel: {
            load.cancel(.cancelled)
        }
        if let error = outcome.error { throw error }
        guard let response = outcome.response else { throw URLError.tether(.badServerResponse, url: request.url) }
        return (outcome.data, response, outcome.metrics)
    }
}
