import Logging
import TetherConcurrency
import TetherStore

/// One set of notes as a server serves it: the DAO, the subscribers, and the feed relay when other servers write
/// to the same store. A server with accounts has one per user with a connection; an anonymous server has one.
final class NotesServedSpace: Sendable {
    let dao: NoteDAO
    let hub = NotesChangeHub()
    let relay: NotesChangeRelay?
    /// On a store of its own (no relay): each change is committed and published behind it, in commit order while
    /// a connection is subscribed.
    let writeGate = NotesWriteGate()

    init(dao: NoteDAO, changes: NotesChangeSource, logger: Logger) {
        self.dao = dao
        if case .feed(let subscribe) = changes.kind {
            relay = NotesChangeRelay(subscribe: subscribe, hub: hub, logger: logger)
        } else {
            relay = nil
        }
    }

    /// Adds connection `id` to the subscribers of a space without a relay: between two writers, once those that
    /// ran side by side (while nobody watched) have left, so that it is pushed every later change in commit order.
    func subscribeLocally(_ id: UInt64, destination: UInt16, source: UInt16, outbox: NotesOutbox) async {
        await writeGate.watch {
            hub.subscribe(id, destination: destination, source: source, outbox: outbox)
        }
    }

    /// Removes connection `id` from the subscribers, if it was one.
    func unsubscribe(_ id: UInt64) {
        guard hub.unsubscribe(id), relay == nil else { return }
        writeGate.unwatch()
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
