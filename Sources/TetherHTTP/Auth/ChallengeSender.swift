import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The sender of every challenge a load produces: the first answer wins, from any thread, now or later.
final class ChallengeSender: NSObject, URLAuthenticationChallengeSender {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<URLConnection.ChallengeDisposition, Never>?
    private var early: URLConnection.ChallengeDisposition?
    private var isAnswered = false

    /// Waits for the answer; `deliver` hands the challenge to whoever answers it.
    func waitForAnswer(deliver: () -> Void) async -> URLConnection.ChallengeDisposition {
        await withCheckedContinuation { continuation in
            let early: URLConnection.ChallengeDisposition? = self.lock.withLock {
                if let early = self.early { return early }
                self.continuation = continuation
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
        let continuation: CheckedContinuation<URLConnection.ChallengeDisposition, Never>? = self.lock.withLock {
            if self.isAnswered { return nil }
            self.isAnswered = true
            if let continuation = self.continuation {
                self.continuation = nil
                return continuation
            }
            self.early = disposition
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

// All mutable state is guarded by `lock`.
extension ChallengeSender: @unchecked Sendable {}
