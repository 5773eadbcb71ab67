import Foundation
import NIOCore

/// The one conversion from a caller's `TimeInterval` (seconds, as the compatibility faces take them) to the engine's
/// clock. Every value is accepted and none traps:
///
/// | seconds | timeout | extension a delegate returns |
/// |---|---|---|
/// | negative (−∞ included) | none | none: the operation times out |
/// | zero | at once | none: the operation times out |
/// | positive, up to ``longest`` | that long | that much more time |
/// | above ``longest``, +∞ | none | ``longest`` more (in effect, no limit) |
/// | NaN | none | none: the operation times out |
enum TimeoutValue {
    /// The longest time the engine arms a timer for: about 31.7 years, far below what its nanosecond clock holds.
    static let longest: TimeInterval = 1e9

    /// A timeout as a duration: nil for "no timeout", `.zero` for "at once".
    static func timeout(_ seconds: TimeInterval) -> TimeAmount? {
        guard seconds >= 0, seconds <= longest else { return nil }
        return .nanoseconds(Int64(seconds * 1e9))
    }

    /// A delegate's answer to "should this operation time out?" as the extra time it grants: `.zero` ends the
    /// operation.
    static func extensionTime(_ seconds: TimeInterval) -> TimeAmount {
        delay(seconds)
    }

    /// A delay that cannot be negative (the alternate-address delay): NaN and negative values are zero, values above
    /// ``longest`` are ``longest``.
    static func delay(_ seconds: TimeInterval) -> TimeAmount {
        guard seconds > 0 else { return .zero }
        return .nanoseconds(Int64(min(seconds, longest) * 1e9))
    }
}
