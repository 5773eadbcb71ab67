/// When to evaluate after a burst of netlink messages: 100 ms after the last one, but never later than 1 s after
/// the first, so a continuous stream of messages cannot postpone an evaluation forever.
struct ChangeCoalescer: Sendable {
    var quietPeriod: Duration = .milliseconds(100)
    var maximumDelay: Duration = .seconds(1)
    private var first: ContinuousClock.Instant?
    private var last: ContinuousClock.Instant?

    init(quietPeriod: Duration = .milliseconds(100), maximumDelay: Duration = .seconds(1)) {
        self.quietPeriod = quietPeriod
        self.maximumDelay = maximumDelay
    }

    /// Notes a change that arrived at `now`.
    mutating func noteChange(at now: ContinuousClock.Instant) {
        first = first ?? now
        last = now
    }

    /// When the pending changes are due for evaluation; `nil` when none are pending.
    var deadline: ContinuousClock.Instant? {
        guard let first, let last else { return nil }
        return min(last + quietPeriod, first + maximumDelay)
    }

    /// Whether pending changes are due at `now`.
    func isDue(at now: ContinuousClock.Instant) -> Bool {
        deadline.map { now >= $0 } ?? false
    }

    /// Forgets the pending changes (after an evaluation).
    mutating func reset() {
        first = nil
        last = nil
    }
}
