import NIOConcurrencyHelpers

/// What the notes soak counted, shared by its writers and watchers: operations by outcome, reconnections, changes
/// pushed, and every violation of the service's contract found (each a sentence saying what and where).
struct NotesSoakCounters: Sendable {
    /// Requests acknowledged.
    var acknowledged = 0
    /// Requests that failed, by the error's name (`storeFailure`, `connectionFailed`, …).
    var failures: [String: Int] = [:]
    /// Requests whose outcome was unknown after a failure and was settled by listing the user's notes: how many had
    /// been committed and how many had not.
    var settledCommitted = 0
    var settledNotCommitted = 0
    /// Connections a writer or watcher made again after its connection ended, and logins refused meanwhile.
    var reconnections = 0
    var refusedLogins = 0
    /// Change streams that ended with an error (the server closes them when it loses its feed) and were watched again.
    var resubscriptions = 0
    /// Changes the watchers received.
    var changesReceived = 0
    /// Database restarts done.
    var restarts = 0
    /// Broken promises: lost or invented notes, another user's note seen, a watcher that never caught up.
    var violations: [String] = []

    /// Counts a failed request under its name.
    mutating func fail(_ name: String) {
        failures[name, default: 0] += 1
    }

    /// Records a violation (the first 50 are kept in full; the count is exact).
    mutating func violate(_ what: String) {
        violationCount += 1
        if violations.count < 50 { violations.append(what) }
        print("violation: \(what)")
    }

    /// Every violation found, including those not kept in ``violations``.
    var violationCount = 0

    /// What each writer is waiting for now (a request, a list, a connection), by writer, with when it began: what a
    /// writer that never returns was waiting for.
    var waits: [String: (what: String, since: ContinuousClock.Instant)] = [:]
}

/// The soak's counters behind a lock.
typealias NotesSoakTally = NIOLockedValueBox<NotesSoakCounters>
