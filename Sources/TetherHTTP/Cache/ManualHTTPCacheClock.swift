public import Foundation
import TetherConcurrency

/// A clock that moves only when told (``advance(by:)``): virtual time for tests of caching.
///
/// Share one between the cache (``HTTPResponseCache/init(memoryCapacity:diskCapacity:directory:isPrivate:clock:)``)
/// and a test server that writes its `Date` headers from ``now``, and the test decides how much time passes
/// between two requests, whatever the machine's speed.
public final class ManualHTTPCacheClock: HTTPCacheClock {
    private let current: LockedBox<Date>

    /// Creates a clock that stands at `start`.
    ///
    /// - Parameter start: The time it shows; default the system's current time, rounded down to a whole second (the
    ///   resolution of an HTTP-date), so that a `Date` header written from it says exactly its time.
    public init(start: Date = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))) {
        self.current = LockedBox(start)
    }

    /// The time the clock shows.
    public var now: Date { self.current.withLock { $0 } }

    /// Moves the clock forward.
    ///
    /// - Parameter duration: How far; a negative duration is ignored (the clock never goes back).
    public func advance(by duration: Duration) {
        let seconds = TimeInterval(seconds: duration)
        guard seconds > 0 else { return }
        self.current.withLock { $0.addTimeInterval(seconds) }
    }
}
