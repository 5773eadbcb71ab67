/// One variant of a case: how to make what its operations reuse (a warm connection, a decoder), the operation, and
/// how to end.
struct Workload: Sendable {
    /// Makes the session: connections opened, peers started, everything the counted operations reuse.
    let prepare: @Sendable () async throws -> WorkloadSession

    init(prepare: @escaping @Sendable () async throws -> WorkloadSession) {
        self.prepare = prepare
    }
}

/// A prepared variant: one call of `operation` does `operationsPerCall` operations and returns when the last one's
/// every effect has happened (a reply read, both ends of a connection closed).
struct WorkloadSession: Sendable {
    let operationsPerCall: Int
    let operation: @Sendable () async throws -> Void
    let end: @Sendable () async throws -> Void

    init(
        operationsPerCall: Int = 1,
        operation: @escaping @Sendable () async throws -> Void,
        end: @escaping @Sendable () async throws -> Void = {}
    ) {
        self.operationsPerCall = operationsPerCall
        self.operation = operation
        self.end = end
    }
}
