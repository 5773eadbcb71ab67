public import Foundation

/// The wall clock of a response cache: when a response was requested and received, how old a stored response is, and
/// so whether it is fresh.
///
/// ``HTTPResponseCache`` reads every time from its clock (``HTTPResponseCache/clock``), and so does each load that
/// uses the cache, for its request and response times. The default, ``SystemHTTPCacheClock``, is the system's time;
/// a ``ManualHTTPCacheClock`` stands still until it is moved, so that a test can age an entry by a day without
/// waiting a second:
///
/// ```swift
/// let clock = ManualHTTPCacheClock()
/// let cache = HTTPResponseCache(clock: clock)
/// // … a load stores a response with `Cache-Control: max-age=60` …
/// clock.advance(by: .seconds(61))
/// // … the next load revalidates it.
/// ```
public protocol HTTPCacheClock: Sendable {
    /// The current time.
    var now: Date { get }
}

/// The system's wall clock: `Date()`.
public struct SystemHTTPCacheClock: HTTPCacheClock {
    /// Creates the system clock.
    public init() {}

    /// The system's current time.
    public var now: Date { Date() }
}

extension HTTPCacheClock where Self == SystemHTTPCacheClock {
    /// The system's wall clock.
    public static var system: SystemHTTPCacheClock { SystemHTTPCacheClock() }
}
