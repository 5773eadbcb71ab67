import Logging

import struct Foundation.Date

extension NotesServer {
    /// Checks `login` again every ``NotesServerLimits/credentialsCheckInterval`` until cancelled; once it no longer
    /// holds (a revoked or expired token, a removed user, a changed password), ends the connection: a
    /// `.notAuthenticated` error, then the close. A check that cannot read the accounts keeps the connection and tries
    /// again at the next interval.
    func checkCredentials(_ login: NotesLogin, of accounts: NotesAccounts, outbox: NotesOutbox) -> Task<Void, Never> {
        let interval = limits.credentialsCheckInterval
        let logger = self.logger
        return Task {
            while true {
                do { try await Task.sleep(for: interval) } catch { return }
                let holds: Bool
                do {
                    holds = try await accounts.isStillValid(login, now: Date())
                } catch {
                    logger.debug("notes: the credentials of \(login.user.name) cannot be checked: \(error)")
                    continue
                }
                if holds { continue }
                if Task.isCancelled { return }
                logger.debug("notes: the credentials of \(login.user.name) no longer hold; closing the connection")
                let error = NotesError(code: .notAuthenticated, message: "the credentials no longer hold")
                outbox.send(Self.frame(.failed(error)))
                outbox.finish()
                return
            }
        }
    }
}
