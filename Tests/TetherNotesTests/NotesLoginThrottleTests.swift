import Testing

@testable import TetherNotes

@Suite("NotesLoginThrottle: the lock schedule and its keys, without I/O")
struct NotesLoginThrottleTests {
    typealias Throttle = NotesLoginThrottle

    @Test(
        "the lock after n failures: none for the first 5, then 1 s doubling up to 15 min",
        arguments: [
            (0, 0), (1, 0), (5, 0), (6, 1), (7, 2), (8, 4), (10, 16), (14, 256), (15, 512), (16, 900), (40, 900),
        ]
    )
    func schedule(failures: Int, seconds: Int) {
        #expect(Throttle.lock(afterFailures: failures) == .seconds(seconds))
    }

    @Test func aLockedUserIsRefusedUncheckedUntilTheLockEnds() {
        var throttle = Throttle()
        let keys: [Throttle.Key] = [.user("alice"), .address("10.0.0.9")]
        for second in 0..<6 {
            let allowed = throttle.begin(keys, at: .seconds(second))
            #expect(allowed)
            throttle.finish(keys, succeeded: false, at: .seconds(second))
        }
        // The sixth failure, at 5 s, locks both keys until 6 s.
        do {
            let allowed = throttle.begin(keys, at: .milliseconds(5_999))
            #expect(!allowed)
        }
        do {
            let allowed = throttle.begin([.user("alice"), .address("10.0.0.7")], at: .milliseconds(5_500))
            #expect(!allowed)
        }
        do {
            let allowed = throttle.begin([.user("bob"), .address("10.0.0.9")], at: .milliseconds(5_500))
            #expect(!allowed)
        }
        do {
            let allowed = throttle.begin([.user("bob"), .address("10.0.0.7")], at: .milliseconds(5_500))
            #expect(allowed)
        }
        throttle.finish([.user("bob"), .address("10.0.0.7")], succeeded: true, at: .milliseconds(5_500))
        do {
            let allowed = throttle.begin(keys, at: .seconds(6))
            #expect(allowed)
        }
        throttle.finish(keys, succeeded: false, at: .seconds(6))
        // The seventh doubles the lock: 2 s.
        do {
            let allowed = throttle.begin(keys, at: .milliseconds(7_999))
            #expect(!allowed)
        }
        do {
            let allowed = throttle.begin(keys, at: .seconds(8))
            #expect(allowed)
        }
        throttle.finish(keys, succeeded: true, at: .seconds(8))
        // A success clears both keys.
        #expect(throttle.count == 0)
    }

    @Test func onceAKeyFailedItsAttemptsInFlightAreBounded() {
        var throttle = Throttle()
        let keys: [Throttle.Key] = [.user("alice"), .address("10.0.0.9")]
        // Without failures, any number of logins run at once (one user's many clients).
        for _ in 0..<10 {
            let allowed = throttle.begin(keys, at: .zero)
            #expect(allowed)
        }
        for _ in 0..<10 { throttle.finish(keys, succeeded: true, at: .zero) }
        _ = throttle.begin(keys, at: .zero)
        throttle.finish(keys, succeeded: false, at: .zero)
        for _ in 0..<Throttle.maxAttemptsInFlight {
            let allowed = throttle.begin(keys, at: .zero)
            #expect(allowed)
        }
        do {
            let allowed = throttle.begin(keys, at: .zero)
            #expect(!allowed)
        }
        throttle.finish(keys, succeeded: false, at: .zero)
        do {
            let allowed = throttle.begin(keys, at: .zero)
            #expect(allowed)
        }
    }

    @Test func aKeyIsForgottenADayAfterItsLastFailure() {
        var throttle = Throttle()
        let keys: [Throttle.Key] = [.user("alice")]
        // Twenty failures, recorded straight (past the sixth, the lock would refuse the attempts themselves).
        for _ in 0..<20 {
            _ = throttle.begin(keys, at: .zero)
            throttle.finish(keys, succeeded: false, at: .zero)
        }
        do {
            let allowed = throttle.begin(keys, at: .seconds(899))
            #expect(!allowed)
        }
        do {
            let allowed = throttle.begin(keys, at: .seconds(900))
            #expect(allowed)
        }
        throttle.finish(keys, succeeded: false, at: .zero)
        do {
            let allowed = throttle.begin(keys, at: Throttle.forgetAfter)
            #expect(allowed)
        }
        throttle.finish(keys, succeeded: false, at: Throttle.forgetAfter)
        // Forgotten: that failure is the first again.
        do {
            let allowed = throttle.begin(keys, at: Throttle.forgetAfter)
            #expect(allowed)
        }
    }
}
