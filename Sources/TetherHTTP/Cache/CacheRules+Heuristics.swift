import Foundation

extension CacheRules {
    /// The statuses whose responses may be reused on a heuristic (RFC 9110 §15.1: heuristically cacheable).
    static let heuristicallyCacheableStatuses: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// The longest heuristic lifetime: one week, as Firefox caps it. A resource unchanged for years is still
    /// asked about once a week.
    static let heuristicLifetimeCap: TimeInterval = 7 * 86_400

    /// The heuristic freshness lifetime of a response that states none (RFC 9111 §4.2.2): 10 % of the time between
    /// its `Last-Modified` and its `Date` (else the time it was received), as WebKit, Chromium and Firefox compute
    /// it, at most ``heuristicLifetimeCap``. Only for a heuristically cacheable status or a response marked
    /// `public`; 0 without a valid `Last-Modified` in the past.
    static func heuristicLifetime(_ entry: CacheEntry) -> TimeInterval {
        guard
            self.heuristicallyCacheableStatuses.contains(entry.statusCode)
                || self.directives(entry.header("Cache-Control"))["public"] != nil,
            let lastModified = self.parseDate(entry.header("Last-Modified"))
        else { return 0 }
        let date = self.parseDate(entry.header("Date")) ?? entry.responseDate
        let unchanged = date.timeIntervalSince(lastModified)
        guard unchanged > 0 else { return 0 }
        return min(unchanged / 10, self.heuristicLifetimeCap)
    }

    /// Whether `entry` is fresh only on a heuristic: it states no lifetime and its heuristic one has not run out.
    static func isHeuristicallyFresh(_ entry: CacheEntry, now: Date) -> Bool {
        self.explicitLifetime(entry) == nil && self.heuristicLifetime(entry) > self.currentAge(entry, now: now)
    }
}
