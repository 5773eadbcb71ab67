import Foundation

extension TimeInterval {
    /// `duration` in seconds.
    init(seconds duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
