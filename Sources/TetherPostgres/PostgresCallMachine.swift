/// The life of one call of a store on a connection: waiting for the connection, running on it, answered.
///
/// Whichever comes first answers the call: the call's own end, the deadline for a connection
/// (``PostgresConfiguration/connectionTimeout``), the deadline for the database's answer once the call has its
/// connection (``PostgresConfiguration/queryTimeout``), or the close of that connection. What comes later is ignored:
/// a late timer, a result after the deadline, a close after the answer. The call's work is never awaited once the call
/// is answered (postgres-nio may never answer a query written to a connection that has just closed, nor give way to
/// cancellation meanwhile).
struct PostgresCallMachine: Equatable {
    /// Where the call is.
    enum State: Equatable {
        /// Waiting for a connection of the pool.
        case waitingForConnection
        /// Running on its connection.
        case running
        /// Answered; nothing changes it any more.
        case answered
    }

    /// What happens to the call.
    enum Event: Equatable {
        /// The pool handed the call a connection.
        case leased
        /// The call's work ended (its result or its error is the answer).
        case finished
        /// ``PostgresConfiguration/connectionTimeout`` passed.
        case connectionDeadlinePassed
        /// ``PostgresConfiguration/queryTimeout`` passed since the call had its connection.
        case answerDeadlinePassed
        /// The call's connection closed.
        case connectionClosed
        /// The task waiting for the call was cancelled.
        case cancelled
    }

    /// The answer the caller gets.
    enum Answer: Equatable {
        /// The work's own result or error.
        case result
        /// `StoreError.Code.io`: no connection within the deadline.
        case noConnection
        /// `StoreError.Code.io`: the database did not answer within the deadline.
        case noAnswer
        /// `StoreError.Code.io`: the connection closed before the call ended.
        case connectionLost
    }

    /// What the I/O code does.
    enum Action: Equatable {
        /// Nothing.
        case none
        /// Run the call's body on the connection: stop the connection deadline, start the answer deadline, watch the
        /// connection's close.
        case runBody
        /// The connection came after the answer: run nothing on it, give it back.
        case refuseBody
        /// Answer the caller; stop the timers and the work (never wait for it).
        case answer(Answer)
        /// Answer the caller as ``answer(_:)`` does, and close the connection: postgres-nio then fails what waits on
        /// it, the server rolls back what the call began, and the pool opens a new connection for the next call.
        case answerAndClose(Answer)
        /// Cancel the call's work; its end, or a deadline, answers the call.
        case cancelWork
    }

    /// Where the call is now.
    private(set) var state: State = .waitingForConnection

    /// Takes `event` into account.
    /// - Parameter event: What happened.
    /// - Returns: What to do.
    mutating func handle(_ event: Event) -> Action {
        switch (state, event) {
        case (.waitingForConnection, .leased):
            state = .running
            return .runBody
        case (.waitingForConnection, .finished), (.running, .finished):
            state = .answered
            return .answer(.result)
        case (.waitingForConnection, .connectionDeadlinePassed):
            state = .answered
            return .answer(.noConnection)
        case (.running, .answerDeadlinePassed):
            state = .answered
            return .answerAndClose(.noAnswer)
        case (.running, .connectionClosed):
            state = .answered
            return .answer(.connectionLost)
        case (.waitingForConnection, .cancelled), (.running, .cancelled):
            return .cancelWork
        case (.answered, .leased):
            return .refuseBody
        case (.waitingForConnection, .answerDeadlinePassed), (.waitingForConnection, .connectionClosed),
            (.running, .leased), (.running, .connectionDeadlinePassed), (.answered, _):
            return .none
        }
    }
}
