import Foundation
import TetherConcurrency

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The sender of every challenge a load produces: the first answer wins, from any thread, now or later.
final class ChallengeSender: NSObject, URLAuthenticationChallengeSender {
    private struct State {
        var continuation: CheckedContinuation<URLConnection.ChallengeDisposition, Never>?
        var early: URLConnection.ChallengeDisposition?
        var isAnswered = false
    }

    private let state = LockedBox(State())

    /// Waits for the answer; `deliver` hands the challenge to whoever answers it.
    func waitForAnswer(deliver: () -> Void) async -> URLConnection.ChallengeDisposition {
        await withCheckedContinuation { continuation in
            let early: URLConnection.ChallengeDisposition? = self.state.withLock { state in
                if let early = state.early { return early }
                state.continuation = continuation
                return nil
            }
            if let early {
                continuation.resume(returning: early)
                return
            }
            deliver()
        }
    }

    /// Records the answer; later answers are ignored.
    func answer(_ disposition: URLConnection.ChallengeDisposition) {
        let continuation: CheckedContinuation<URLConnection.ChallengeDisposition, Never>? = self.state.withLock {
            state in
            if state.isAnswered { return nil }
            state.isAnswered = true
            if let continuation = state.continuation {
                state.continuation = nil
                return continuation
            }
            state.early = disposition
            return nil
        }
        continuation?.resume(returning: disposition)
    }

    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {
        self.answer(.useCredential(credential))
    }

    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {
        self.answer(.continueWithoutCredential)
    }

    func cancel(_ challenge: URLAuthenticationChallenge) {
        self.answer(.cancel)
    }

    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {
        self.answer(.performDefaultHandling)
    }

    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {
        self.answer(.rejectProtectionSpace)
    }
}

// Sendable: its only stored property is a `LockedBox` of Sendable state (NSObject itself carries none).
extension ChallengeSender: @unchecked Sendable {}
