/// Slows password and token guessing, per user name and per client address, as a state machine: attempts and their
/// outcomes in, decisions out; time is given by the caller. No I/O: ``NotesServer`` keeps one behind a lock.
///
/// Schedule, for each key (a user name, whether it exists or not, and a client address) on its own: the first
/// ``freeFailures`` failures cost nothing; the failure after them locks the key for 1 second, and each further
/// failure doubles the lock, up to ``maxLock`` (15 minutes). While either key of an attempt is locked, the attempt
/// is refused without checking the secret, with the same answer as a wrong secret. A success clears both keys; a key
/// with no failure for ``forgetAfter`` is forgotten. Once a key has failed, at most ``maxAttemptsInFlight`` attempts of
/// it are checked at once (the others are refused), so that parallel connections cannot run many guesses past a lock
/// that a failure would set; a key without failures (a user logging in from several clients at once) is not held
/// back.
struct NotesLoginThrottle {
    /// Failures of a key that set no lock.
    static let freeFailures = 5
    /// The longest lock.
    static let maxLock: Duration = .seconds(15 * 60)
    /// A key whose last failure is this old is forgotten.
    static let forgetAfter: Duration = .seconds(24 * 3_600)
    /// Attempts of one key checked at once.
    static let maxAttemptsInFlight = 4
    /// The most keys remembered; past it, keys that are not locked are forgotten first.
    static let maxKeys = 100_000

    /// A user name or a client address.
    enum Key: Hashable {
        case user(String)
        case address(String)
    }

    private struct Entry {
        var failures = 0
        var lastFailure: Duration = .zero
        var inFlight = 0
    }

    private var entries: [Key: Entry] = [:]

    /// The lock after `failures` failures.
    static func lock(afterFailures failures: Int) -> Duration {
        guard failures > freeFailures else { return .zero }
        let doublings = min(failures - freeFailures - 1, 20)
        return min(.seconds(1 << doublings), maxLock)
    }

    /// An attempt of `keys` begins at `now`: true when the secret may be checked (then ``finish(_:succeeded:at:)``
    /// must follow), false when it must be refused unchecked.
    mutating func begin(_ keys: [Key], at now: Duration) -> Bool {
        for key in keys {
            guard let entry = entries[key] else { continue }
            if entry.inFlight == 0 && now >= entry.lastFailure + Self.forgetAfter {
                entries[key] = nil
                continue
            }
            if entry.failures > 0 && entry.inFlight >= Self.maxAttemptsInFlight { return false }
            if now < entry.lastFailure + Self.lock(afterFailures: entry.failures) { return false }
        }
        if entries.count + keys.count > Self.maxKeys { forgetUnlocked(at: now) }
        for key in keys { entries[key, default: Entry()].inFlight += 1 }
        return true
    }

    /// The attempt of `keys` that ``begin(_:at:)`` allowed ended.
    mutating func finish(_ keys: [Key], succeeded: Bool, at now: Duration) {
        for key in keys {
            guard var entry = entries[key] else { continue }
            entry.inFlight = max(entry.inFlight - 1, 0)
            if succeeded {
                entry.failures = 0
            } else {
                entry.failures += 1
                entry.lastFailure = now
            }
            entries[key] = entry.failures == 0 && entry.inFlight == 0 ? nil : entry
        }
    }

    /// The keys remembered (for tests).
    var count: Int { entries.count }

    private mutating func forgetUnlocked(at now: Duration) {
        entries = entries.filter { _, entry in
            entry.inFlight > 0
                || (now < entry.lastFailure + Self.lock(afterFailures: entry.failures)
                    && now < entry.lastFailure + Self.forgetAfter)
        }
    }
}
