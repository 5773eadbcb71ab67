import Logging
import TetherConcurrency
import TetherCore
import TetherStore

import struct Foundation.Date
import struct Foundation.UUID

extension NotesServer {
    func execute(
        _ actions: [NotesServerSession.Action],
        session: inout NotesServerSession,
        binding: inout Binding,
        id: UInt64,
        outbox: NotesOutbox
    ) async {
        for action in actions {
            switch action {
            case .send(let frame):
                await outbox.reply(frame)
            case .perform(let requestID, let operation):
                guard let space = binding.space else { continue }
                let prepared: Result<Change, NotesError>
                switch operation {
                case .list:
                    let next = session.stored(requestID: requestID, await list(space.dao))
                    await execute(next, session: &session, binding: &binding, id: id, outbox: outbox)
                    continue
                case .add(let text): prepared = .success(.insert(Note(content: text)))
                case .edit(let noteID, let text): prepared = await edit(noteID, text: text, in: space.dao)
                case .remove(let noteID): prepared = .success(.delete(noteID))
                }
                guard case .success(let change) = prepared, space.relay == nil else {
                    // With a feed, changes come back through it in the database's commit order.
                    let next = session.stored(requestID: requestID, await commit(prepared, to: space.dao))
                    await execute(next, session: &session, binding: &binding, id: id, outbox: outbox)
                    continue
                }
                // On its own store, a change is committed and published behind the space's gate: while a connection
                // is subscribed, one at a time, so that the changes are pushed in commit order.
                await space.writeGate.run {
                    let next = session.stored(requestID: requestID, await commit(.success(change), to: space.dao))
                    await execute(next, session: &session, binding: &binding, id: id, outbox: outbox)
                }
            case .authenticate(let requestID, let credentials):
                let result = await authenticate(credentials, into: &binding, outbox: outbox)
                let next = session.authenticated(requestID: requestID, result)
                await execute(next, session: &session, binding: &binding, id: id, outbox: outbox)
            case .subscribe(let requestID, let destination, let source):
                guard let space = binding.space else { continue }
                var isSubscribed = true
                if let relay = space.relay {
                    // Held until the feed listens: a subscriber added while it reconnects would miss changes.
                    isSubscribed = await relay.subscribe(
                        id,
                        destination: destination,
                        source: source,
                        outbox: outbox,
                        timeout: feedWait
                    )
                } else {
                    await space.subscribeLocally(id, destination: destination, source: source, outbox: outbox)
                }
                let next = session.subscription(requestID: requestID, isSubscribed: isSubscribed)
                await execute(next, session: &session, binding: &binding, id: id, outbox: outbox)
            case .publish(let change):
                // With a feed, the change comes back through it (once, in commit order).
                if let space = binding.space, space.relay == nil { space.hub.publish(change) }
            case .close:
                outbox.finish()
            }
        }
    }

    /// Checks `credentials` (throttled per user and per address), binds the connection to the user's notes, joins the
    /// user's change feed, and starts checking the credentials again every ``NotesServerLimits/credentialsCheckInterval``.
    private func authenticate(
        _ credentials: NotesCredentials,
        into binding: inout Binding,
        outbox: NotesOutbox
    ) async -> Result<Void, NotesError> {
        guard case .accounts(let accounts, let registry) = mode else {
            return .failure(NotesError(code: .unknownMessage, message: "this server has no accounts"))
        }
        let refused = NotesError(code: .authenticationFailed, message: "authentication failed")
        let keys: [NotesLoginThrottle.Key] = [.user(credentials.user), .address(binding.address)]
        guard throttle.withLock({ $0.begin(keys, at: now()) }) else {
            logger.debug("notes login of \(credentials.user) from \(binding.address) refused: throttled")
            return .failure(refused)
        }
        let login: NotesLogin?
        do {
            login = try await accounts.login(credentials, now: Date())
        } catch {
            throttle.withLock { $0.finish(keys, succeeded: false, at: now()) }
            logger.debug("notes login: the accounts failed: \(error)")
            return .failure(refused)
        }
        throttle.withLock { $0.finish(keys, succeeded: login != nil, at: now()) }
        guard let login else {
            logger.debug("notes login of \(credentials.user) from \(binding.address) refused")
            return .failure(refused)
        }
        let user = login.user
        guard counts.withLock({ $0.bind(user.name, limits: limits) }) else {
            return .failure(NotesError(code: .limitExceeded, message: "too many connections of this user"))
        }
        binding.user = user.name
        do {
            let space = try await registry.space(of: user)
            if let relay = space.relay {
                try await relay.join()
                binding.joinedRelay = relay
            }
            binding.space = space
            binding.credentialsCheck = checkCredentials(login, of: accounts, outbox: outbox)
        } catch {
            logger.debug("notes login of \(user.name): the notes cannot be opened: \(error)")
            return .failure(NotesError(code: .storeFailure, message: "the notes cannot be opened"))
        }
        return .success(())
    }

    /// A change a request makes, ready to commit: an edit's note is read first, outside the gate.
    enum Change {
        case insert(Note)
        case update(Note)
        case delete(UUID)
    }

    private func list(_ dao: NoteDAO) async -> Result<NotesServerSession.StoreOutcome, NotesError> {
        do {
            return .success(.notes(try await dao.findAll()))
        } catch {
            return .failure(storeFailure(error))
        }
    }

    /// The note `id` with its text replaced, or `.notFound`.
    private func edit(_ id: UUID, text: String, in dao: NoteDAO) async -> Result<Change, NotesError> {
        do {
            guard var note = try await dao.findById(Note(id: id, content: "")) else { return .failure(notFound(id)) }
            note.content = text
            return .success(.update(note))
        } catch {
            return .failure(storeFailure(error))
        }
    }

    /// Commits `change` (a failure passes through).
    private func commit(
        _ change: Result<Change, NotesError>,
        to dao: NoteDAO
    ) async -> Result<NotesServerSession.StoreOutcome, NotesError> {
        do {
            switch try change.get() {
            case .insert(let note):
                try await dao.create(note)
                return .success(.changed(.added(note)))
            case .update(let note):
                try await dao.modify(note)
                return .success(.changed(.edited(note)))
            case .delete(let id):
                guard try await dao.remove(Note(id: id, content: "")) else { return .failure(notFound(id)) }
                return .success(.changed(.removed(id)))
            }
        } catch let error as NotesError {
            return .failure(error)
        } catch let error as StoreError where error.code == .notFound {
            // Removed between the edit's read and its write (by another connection).
            guard case .success(.update(let note)) = change else { return .failure(storeFailure(error, wrote: true)) }
            return .failure(notFound(note.id))
        } catch {
            return .failure(storeFailure(error, wrote: true))
        }
    }

    private func notFound(_ id: UUID) -> NotesError {
        NotesError(code: .notFound, message: "no note \(id.uuidString)")
    }

    /// The store's error names files and databases: it stays in the server's log. A write that failed may have been
    /// committed all the same (a database connection lost between the commit and its answer): the message says so.
    private func storeFailure(_ error: any Error, wrote: Bool = false) -> NotesError {
        logger.debug("notes store failed: \(error)")
        let message =
            wrote ? "the store failed; the change may or may not have been made" : "the store failed; nothing changed"
        return NotesError(code: .storeFailure, message: message)
    }
}
