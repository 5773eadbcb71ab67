import AsyncHTTPClient
import Logging
import NIOCore
import NIOHTTP1
import TetherConcurrency

/// The response to one request on the wire, owned by its load: the engine (AsyncHTTPClient's response delegate)
/// hands it the head and each body part on the request's event loop, and the load's task takes them from it.
///
/// The decisions are ``ResponseStreamMachine``'s, under one lock; this class carries them out: it resumes the load
/// when it waits, withholds the engine's next read while the load is ``ResponseStreamMachine/highWatermark`` bytes
/// behind, and cancels the engine's request when the load ``cancel(_:)``s. A cancellation (an idle timeout) ends the
/// stream after the parts already received, so none of them is lost to it. Every head and part that arrives counts
/// as activity for the load's idle watchdog, when it arrives.
final class ResponseReceiver: HTTPClientResponseDelegate {
    typealias Response = Void

    private struct State {
        var machine = ResponseStreamMachine()
        /// The load's task, waiting for the head or the next part.
        var waiter: CheckedContinuation<ResponseStreamMachine.Wake, Never>?
        /// A wake that came between the load's decision to wait and its continuation (taken when it waits).
        var pendingWake: ResponseStreamMachine.Wake?
        /// The engine's next read waits for this.
        var withheld: EventLoopPromise<Void>?
        /// The engine's request, until it ended.
        var engineTask: HTTPClient.Task<Void>?
        /// Cancelled before the engine's request was made: it is cancelled as soon as it is.
        var cancelsOnStart = false
    }

    private let state = LockedBox(State())
    private let watchdog: IdleWatchdog?

    init(watchdog: IdleWatchdog?) {
        self.watchdog = watchdog
    }

    /// Sends `request` on `client`; the response comes to this receiver.
    func start(_ request: HTTPClient.Request, on client: HTTPClient, logger: Logger?) {
        let task = client.execute(request: request, delegate: self, eventLoop: .indifferent, logger: logger)
        // An engine that was shut down fails the task without telling its delegate: the task's failure ends the
        // stream too (after a failure the delegate heard, it changes nothing).
        task.futureResult.whenFailure { error in self.handle({ $0.failed(error) }, engineEnded: true) }
        let cancels = self.state.withLock { state -> Bool in
            // An engine that already ended (or a receiver cancelled before it started) keeps no task.
            if !state.machine.hasEnded { state.engineTask = task }
            return state.cancelsOnStart
        }
        if cancels { task.cancel() }
    }

    /// Ends the stream with `error` after the parts already received, and cancels the engine's request.
    func cancel(_ error: any Error) {
        let (action, waiter, engineTask) = self.state.withLock { state in
            let action = state.machine.cancel(error)
            if action.cancelsEngine, state.engineTask == nil { state.cancelsOnStart = true }
            return (action, Self.takeWaiter(for: action, in: &state), action.cancelsEngine ? state.engineTask : nil)
        }
        self.carryOut(action, waiter: waiter)
        engineTask?.cancel()
    }

    // MARK: - The load's side

    /// The response's head, once it arrived.
    /// - Throws: the engine's error, or the cancellation's, when it came before the head.
    func head() async throws -> HTTPResponseHead {
        switch await self.ask({ $0.awaitHead() }) {
        case .head(let head): return head
        case .failure(let error): throw error
        case .part, .end, .none: preconditionFailure("a head was asked for")
        }
    }

    /// The next body part, or nil at the end.
    /// - Throws: the engine's error or the cancellation's, after every part received before it.
    func next() async throws -> ByteBuffer? {
        switch await self.ask({ $0.next() }) {
        case .part(let part): return part
        case .end: return nil
        case .failure(let error): throw error
        case .head, .none: preconditionFailure("a part was asked for")
        }
    }

    private func ask(
        _ request: (inout ResponseStreamMachine) -> ResponseStreamMachine.Answer
    ) async
        -> ResponseStreamMachine.Wake
    {
        let (answer, released) = self.state.withLock { state in
            let answer = request(&state.machine)
            guard case .part(_, .release) = answer else { return (answer, nil as EventLoopPromise<Void>?) }
            defer { state.withheld = nil }
            return (answer, state.withheld)
        }
        released?.succeed()
        switch answer {
        case .head(let head): return .head(head)
        case .part(let part, _): return .part(part)
        case .end: return .end
        case .failure(let error): return .failure(error)
        case .wait:
            return await withCheckedContinuation { continuation in
                let ready = self.state.withLock { state -> ResponseStreamMachine.Wake? in
                    if let wake = state.pendingWake {
                        state.pendingWake = nil
                        return wake
                    }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }

    // MARK: - The engine's side (on the request's event loop)

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        self.watchdog?.touch()
        self.handle { $0.receivedHead(head) }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        self.watchdog?.touch()
        let withheld = self.handle({ $0.receivedBodyPart(buffer) }, eventLoop: task.eventLoop)
        return withheld ?? task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
        self.handle({ $0.failed(error) }, engineEnded: true)
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        self.watchdog?.touch()
        self.handle({ $0.finished() }, engineEnded: true)
    }

    /// Runs an engine event; returns the future the engine waits for when the event withholds its next read.
    @discardableResult
    private func handle(
        _ event: (inout ResponseStreamMachine) -> ResponseStreamMachine.Action,
        eventLoop: (any EventLoop)? = nil,
        engineEnded: Bool = false
    ) -> EventLoopFuture<Void>? {
        let (action, waiter, withheld) = self.state.withLock { state in
            let action = event(&state.machine)
            if engineEnded { state.engineTask = nil }
            var withheld: EventLoopPromise<Void>?
            if action.demand == .withhold, let eventLoop {
                withheld = eventLoop.makePromise()
                state.withheld = withheld
            }
            return (action, Self.takeWaiter(for: action, in: &state), withheld)
        }
        self.carryOut(action, waiter: waiter)
        return withheld?.futureResult
    }

    /// The waiter that `action` wakes (taken from `state`); when the load has not put it there yet, the wake waits
    /// for it in `state`.
    private static func takeWaiter(
        for action: ResponseStreamMachine.Action,
        in state: inout State
    ) -> CheckedContinuation<ResponseStreamMachine.Wake, Never>? {
        if case .none = action.wake { return nil }
        guard let waiter = state.waiter else {
            state.pendingWake = action.wake
            return nil
        }
        state.waiter = nil
        return waiter
    }

    /// Resumes the waiter with the action's wake, and lets a withheld engine read on when the action releases it.
    private func carryOut(
        _ action: ResponseStreamMachine.Action,
        waiter: CheckedContinuation<ResponseStreamMachine.Wake, Never>?
    ) {
        if action.demand == .release {
            let withheld = self.state.withLock { state -> EventLoopPromise<Void>? in
                defer { state.withheld = nil }
                return state.withheld
            }
            withheld?.succeed()
        }
        waiter?.resume(returning: action.wake)
    }
}
