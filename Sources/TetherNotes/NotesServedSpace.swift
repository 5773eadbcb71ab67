import Logging
import TetherConcurrency
import TetherStore

/// One set of notes as a server serves it: the DAO, the subscribers, and the feed relay when other servers write
/// to the same store. A server with accounts has one per user with a connection; an anonymous server has one.
final class NotesServedSpace: Sendable {
    let dao: NoteDAO
    let hub = NotesChangeHub()
    let relay: NotesChangeRelay?

    init(dao: NoteDAO, changes: NotesChangeSource, logger: Logger) {
        self.dao = dao
        if case .feed(let subscribe) = changes.kind {
            relay = NotesChangeRelay(subscribe: subscribe, hub: hub, logger: logger)
        } else {
            relay = nil
        }
    }
}

/// The spaces of a server with accounts, opened once per user, on first use.
actor NotesSpaceRegistry {
    private let accounts: NotesAccounts
    private let logger: Logger
    private var spaces: [String: Task<NotesServedSpace, any Error>] = [:]
    /// Every space opened so far, readable without waiting for the actor (``NotesServer/subscriberCount``).
    nonisolated let opened = LockedBox<[NotesServedSpace]>([])

    init(accounts: NotesAccounts, logger: Logger) {
        self.accounts = accounts
        self.logger = logger
    }

    /// The space of `user`, opened if needed.
    func space(of user: NotesUser) async throws -> NotesServedSpace {
        let key = user.notesTable
        if let opening = spaces[key] { return try await opening.value }
        let (accounts, logger) = (self.accounts, self.logger)
        let opening = Task {
            let space = try await accounts.notes(of: user)
            return NotesServedSpace(dao: NoteDAO(store: space.store), changes: space.changes, logger: logger)
        }
        spaces[key] = opening
        do {
            let space = try await opening.value
            opened.withLock { $0.append(space) }
            return space
        } catch {
            spaces[key] = nil
            throw error
        }
    }
}
