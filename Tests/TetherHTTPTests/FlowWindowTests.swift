import Foundation
import Testing
import TetherConcurrency

@testable import TetherHTTP

/// The window that bounds body bytes handed to the delegate but not yet consumed: a load waits at the limit and
/// resumes only below the low mark.
struct FlowWindowTests {
    /// Reserves `count` in a task of its own; `resumed` is set once the reservation returns.
    private func reserveInTask(_ window: FlowWindow, _ count: Int) -> (Task<Void, Never>, LockedBox<Bool>) {
        let resumed = LockedBox(false)
        let task = Task {
            await window.reserve(count)
            resumed.withLock { $0 = true }
        }
        return (task, resumed)
    }

    /// Polls `flag` for up to `limit`.
    private func becomesTrue(_ flag: LockedBox<Bool>, within limit: Duration = .seconds(10)) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if flag.withLock({ $0 }) { return true }
            try await Task.sleep(for: .milliseconds(5))
        }
        return flag.withLock { $0 }
    }

    /// Polls until `window` counts `bytes` outstanding (a waiter counts its chunk once it waits).
    private func waitUntilOutstanding(_ window: FlowWindow, is bytes: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while window.outstanding != bytes, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(window.outstanding == bytes)
    }

    @Test func reservationsBelowTheLimitReturnAtOnce() async {
        let window = FlowWindow(limit: 100, resumeBelow: 50)
        await window.reserve(60)
        await window.reserve(39)
        // 99 outstanding: still below the limit, so one more is admitted (and may overshoot it).
        await window.reserve(30)
        #expect(window.outstanding == 129)
    }

    @Test func aFullWindowWaitsUntilReleasesGoBelowTheLowMark() async throws {
        let window = FlowWindow(limit: 100, resumeBelow: 50)
        await window.reserve(40)
        await window.reserve(40)
        await window.reserve(40)  // 120: full
        let (task, resumed) = reserveInTask(window, 40)
        try await waitUntilOutstanding(window, is: 160)
        // Releases that leave 80 and then 50 outstanding (besides the waiter's 40) keep it waiting.
        window.release(40)
        try await Task.sleep(for: .milliseconds(50))
        #expect(!resumed.withLock { $0 })
        window.release(30)
        try await Task.sleep(for: .milliseconds(50))
        #expect(!resumed.withLock { $0 })
        // 49 outstanding besides it: below the low mark.
        window.release(1)
        #expect(try await becomesTrue(resumed))
        await task.value
        #expect(window.outstanding == 89)
    }

    @Test func closingResumesAWaiterAndAdmitsEverythingAfter() async throws {
        let window = FlowWindow(limit: 10)
        await window.reserve(10)
        let (task, resumed) = reserveInTask(window, 10)
        try await waitUntilOutstanding(window, is: 20)
        #expect(!resumed.withLock { $0 })
        window.close()
        #expect(try await becomesTrue(resumed))
        await task.value
        await window.reserve(1_000)
        #expect(window.outstanding == 1_020)
    }
}
