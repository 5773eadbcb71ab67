import NIOCore
import NIOPosix
import PostgresNIO
import TetherConcurrency
import TetherStore

/// One call of a store on a connection, answered by whichever comes first of its end, its deadlines and the close of
/// its connection (``PostgresCallMachine`` decides; this class runs the timers, the work and the answer).
///
/// The work runs in a task of its own that the caller never awaits: a query that postgres-nio never answers (one
/// written to a connection that has just closed) and that ignores cancellation holds that task, not the caller. The
/// timers run on event loops and only answer, cancel and close: nothing blocks a loop.
final class PostgresCall<T: Sendable>: Sendable {
    /// How the call gets its connection: it runs `use` on one and returns what `use` returns.
    typealias Lease = @Sendable (_ use: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T

    private struct Shared: Sendable {
        var machine = PostgresCallMachine()
        var continuation: CheckedContinuation<T, any Error>?
        var result: Result<T, any Error>?
        var connection: PostgresConnection?
        var connectionTimer: Scheduled<Void>?
        var answerTimer: Scheduled<Void>?
        var work: Task<Void, Never>?
        var isCancelled = false
    }

    /// What is done (for messages).
    let what: String
    private let endpoint: String
    private let connectionTimeout: Duration?
    private let queryTimeout: Duration?
    private let watch: PostgresConnectionWatch
    private let mapError: @Sendable (any Error) -> StoreError
    private let shared = LockedBox(Shared())

    /// A call.
    /// - Parameters:
    ///   - what: What is done, for messages.
    ///   - configuration: Its deadlines and the database's place.
    ///   - waitsForPool: Whether ``PostgresConfiguration/connectionTimeout`` bounds the wait for a connection of the
    ///     pool. A connection of the call's own is bounded by postgres-nio's connect timeout instead, so that opening
    ///     a store reports the server's own answer (refused, authentication, no such database), even a slow one.
    ///   - watch: Who reports the close of the call's connection.
    ///   - mapError: Makes a `StoreError` of the work's error.
    init(
        _ what: String,
        configuration: PostgresConfiguration,
        waitsForPool: Bool = true,
        watch: PostgresConnectionWatch,
        mapError: @escaping @Sendable (any Error) -> StoreError
    ) {
        self.what = what
        self.endpoint = configuration.endpoint
        self.connectionTimeout = waitsForPool ? configuration.connectionTimeout : nil
        self.queryTimeout = configuration.queryTimeout
        self.watch = watch
        self.mapError = mapError
    }

    /// Runs `body` on the connection `lease` gives, in a task with `executor` as its preference; returns its result
    /// or throws a `StoreError`.
    func run(
        executor: (any TaskExecutor)?,
        lease: @escaping Lease,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                shared.withLock { $0.continuation = continuation }
                let timer = connectionTimeout.map {
                    NIOSingletons.posixEventLoopGroup.any().scheduleTask(in: TimeAmount($0)) {
                        self.handle(.connectionDeadlinePassed)
                    }
                }
                let work = Task(executorPreference: executor) {
                    do {
                        let value = try await lease { connection in
                            try self.start(on: connection)
                            do {
                                let value = try await body(connection)
                                self.handle(.finished, result: .success(value))
                                return value
                            } catch {
                                self.handle(.finished, result: .failure(error))
                                throw error
                            }
                        }
                        self.handle(.finished, result: .success(value))
                    } catch {
                        self.handle(.finished, result: .failure(error))
                    }
                }
                let (isAnswered, isCancelled) = shared.withLock { shared in
                    guard shared.machine.state != .answered else { return (true, shared.isCancelled) }
                    shared.connectionTimer = timer
                    shared.work = work
                    return (false, shared.isCancelled)
                }
                if isAnswered {
                    timer?.cancel()
                    work.cancel()
                } else if isCancelled {
                    handle(.cancelled)
                }
            }
        } onCancel: {
            shared.withLock { $0.isCancelled = true }
            handle(.cancelled)
        }
    }

    /// The lease gave `connection`: arms the answer deadline and the close watch, or refuses a connection that comes
    /// after the answer.
    private func start(on connection: PostgresConnection) throws {
        let (action, connectionTimer) = shared.withLock { shared in
            let action = shared.machine.handle(.leased)
            if action == .runBody { shared.connection = connection }
            return (action, action == .runBody ? shared.connectionTimer.take() : nil)
        }
        guard action == .runBody else { throw CancellationError() }
        connectionTimer?.cancel()
        watch.watch(connection, owner: ObjectIdentifier(self)) { self.handle(.connectionClosed) }
        let timer = queryTimeout.map {
            connection.eventLoop.scheduleTask(in: TimeAmount($0)) { self.handle(.answerDeadlinePassed) }
        }
        let isAnswered = shared.withLock { shared -> Bool in
            guard shared.machine.state != .answered else { return true }
            shared.answerTimer = timer
            return false
        }
        if isAnswered {
            // Answered meanwhile (the connection was closed already): a query on it would never be answered.
            timer?.cancel()
            throw CancellationError()
        }
    }

    private func handle(_ event: PostgresCallMachine.Event, result: Result<T, any Error>? = nil) {
        let (action, settled) = shared.withLock { shared in
            let action = shared.machine.handle(event)
            if event == .finished, case .answer = action { shared.result = result }
            switch action {
            case .answer, .answerAndClose: return (action, Optional(Self.settle(&shared)))
            case .cancelWork: return (action, Optional(Settled(work: shared.work)))
            case .none, .runBody, .refuseBody: return (action, nil)
            }
        }
        guard let settled else { return }
        settled.work?.cancel()
        settled.connectionTimer?.cancel()
        settled.answerTimer?.cancel()
        if let connection = settled.connection {
            watch.unwatch(connection, owner: ObjectIdentifier(self))
            if case .answerAndClose = action {
                let _: EventLoopFuture<Void> = connection.close()
            }
        }
        switch action {
        case .answer(let answer), .answerAndClose(let answer):
            settled.continuation?.resume(with: self.answer(answer, result: settled.result))
        case .none, .runBody, .refuseBody, .cancelWork:
            break
        }
    }

    /// What an answer clears away, taken under the lock and used outside it.
    private struct Settled {
        var work: Task<Void, Never>?
        var continuation: CheckedContinuation<T, any Error>?
        var result: Result<T, any Error>?
        var connection: PostgresConnection?
        var connectionTimer: Scheduled<Void>?
        var answerTimer: Scheduled<Void>?
    }

    private static func settle(_ shared: inout Shared) -> Settled {
        Settled(
            work: shared.work.take(),
            continuation: shared.continuation.take(),
            result: shared.result.take(),
            connection: shared.connection.take(),
            connectionTimer: shared.connectionTimer.take(),
            answerTimer: shared.answerTimer.take()
        )
    }

    private func answer(_ answer: PostgresCallMachine.Answer, result: Result<T, any Error>?) -> Result<T, any Error> {
        let unknown = "a write may or may not have been committed"
        switch answer {
        case .result:
            guard let result else { return .failure(StoreError(code: .io, message: "\(what): no result")) }
            return result.mapError { self.mapError($0) }
        case .noConnection:
            return .failure(
                StoreError(
                    code: .io,
                    message: "\(what): no connection to the database at \(endpoint) within "
                        + "\(connectionTimeout ?? .zero)"
                )
            )
        case .noAnswer:
            return .failure(
                StoreError(
                    code: .io,
                    message: "\(what): the database at \(endpoint) did not answer within \(queryTimeout ?? .zero); "
                        + "its connection is closed (\(unknown))"
                )
            )
        case .connectionLost:
            return .failure(
                StoreError(
                    code: .io,
                    message: "\(what): the connection to the database at \(endpoint) closed before the database "
                        + "answered (\(unknown))"
                )
            )
        }
    }
}
