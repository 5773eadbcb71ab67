import Foundation
import TetherNotes
import TetherPostgres
import TetherStore

/// One client of the notes soak that adds, edits and removes notes of its own as one user, through one server,
/// keeping what it expects the user's notes to hold.
///
/// A request that fails leaves its outcome unknown (the database may have committed it before the failure): the
/// writer lists the user's notes once the service answers again and settles it, and checks that every note of its
/// own is exactly as its acknowledged requests left it. Its notes' texts start with `<user>/w<index>/`, so that
/// another user's note is recognised wherever it shows up.
struct NotesSoakWriter {
    /// What a request changes, for settling it after a failure.
    enum Pending {
        case add(text: String)
        case edit(id: UUID, old: String, new: String)
        case remove(id: UUID, old: String)
    }

    let user: String
    let token: String
    let port: Int
    let index: Int
    let tally: NotesSoakTally
    /// The user's table read straight from the database, to tell a wrong answer of the service from a lost write.
    var direct: PostgresStore<Note>?
    private(set) var expected: [UUID: String] = [:]
    private var counter = 0
    private var lastSettled: String?
    private var random: SplitMix

    init(user: String, token: String, port: Int, index: Int, seed: UInt64, tally: NotesSoakTally) {
        self.user = user
        self.token = token
        self.port = port
        self.index = index
        self.tally = tally
        self.random = SplitMix(seed: seed)
    }

    /// The prefix of this writer's notes.
    var prefix: String { "\(user)/w\(index)/" }

    /// Writes until `deadline`, then checks its notes once more; returns with its last connection closed.
    mutating func run(until deadline: ContinuousClock.Instant) async {
        var client: RemoteNoteStore?
        while ContinuousClock.now < deadline {
            if client == nil {
                client = await NotesSoakClient.connect(user: user, token: token, port: port, tally: tally, by: deadline)
                guard client != nil else { break }
            }
            guard let store = client else { break }
            let pending = nextRequest()
            let server = port
            tally.withLockedValue { $0.waits[prefix] = ("\(pending) through the server on port \(server)", .now) }
            defer { tally.withLockedValue { $0.waits[prefix] = nil } }
            do {
                try await perform(pending, on: store)
                tally.withLockedValue { $0.acknowledged += 1 }
            } catch {
                let name = NotesSoakClient.name(of: error)
                tally.withLockedValue { $0.fail(name) }
                if name == "notFound" {
                    tally.withLockedValue { $0.violate("\(prefix): a request on an acknowledged note: notFound") }
                }
                if name != "storeFailure" && name != "notFound" {
                    await store.close()
                    client = nil
                    tally.withLockedValue { $0.reconnections += 1 }
                }
                guard await settle(pending, through: &client, by: deadline + .seconds(60)) else { break }
            }
        }
        if let client {
            await check(through: client, pending: nil)
            await client.close()
        }
    }

    /// The next request: adds until the writer has 20 notes, then a mix of adds, edits and removes.
    private mutating func nextRequest() -> Pending {
        counter += 1
        let text = "\(prefix)\(counter)"
        let roll = random.next() % 10
        if expected.count < 20 || roll < 3 || expected.isEmpty { return .add(text: text) }
        let ids = expected.keys.sorted { $0.uuidString < $1.uuidString }
        let id = ids[Int(random.next() % UInt64(ids.count))]
        let old = expected[id] ?? ""
        return roll < 7 ? .edit(id: id, old: old, new: text) : .remove(id: id, old: old)
    }

    private mutating func perform(_ pending: Pending, on store: RemoteNoteStore) async throws {
        switch pending {
        case .add(let text):
            let note = try await store.add(text)
            if note.content != text {
                tally.withLockedValue {
                    $0.violate("\(prefix): the add of \(text) answered \(note.content) \(note.id)")
                }
            }
            expected[note.id] = text
        case .edit(let id, _, let new):
            let note = try await store.edit(id, text: new)
            if note.content != new { tally.withLockedValue { $0.violate("\(prefix): an edit answered \(note)") } }
            expected[id] = new
        case .remove(let id, _):
            try await store.remove(id)
            expected[id] = nil
        }
    }

    /// Lists the user's notes (reconnecting as needed) and settles `pending` from them; false when the service did
    /// not answer by `deadline`.
    private mutating func settle(
        _ pending: Pending,
        through client: inout RemoteNoteStore?,
        by deadline: ContinuousClock.Instant
    ) async -> Bool {
        while ContinuousClock.now < deadline {
            if client == nil {
                client = await NotesSoakClient.connect(user: user, token: token, port: port, tally: tally, by: deadline)
                guard client != nil else { break }
            }
            guard let store = client else { break }
            if await check(through: store, pending: pending) { return true }
            await store.close()
            client = nil
        }
        tally.withLockedValue { $0.violate("\(prefix): the service did not answer a list within 60 s") }
        return false
    }

    /// Lists the user's notes and compares this writer's with what it expects, settling `pending` first; false
    /// when the list failed.
    @discardableResult
    private mutating func check(through store: RemoteNoteStore, pending: Pending?) async -> Bool {
        let notes: [Note]
        let writer = prefix
        let after = pending.map { "\($0)" } ?? "the deadline"
        tally.withLockedValue { $0.waits[writer] = ("a list (after \(after))", .now) }
        defer { tally.withLockedValue { $0.waits[writer] = nil } }
        do {
            notes = try await store.list()
        } catch {
            tally.withLockedValue { $0.fail(NotesSoakClient.name(of: error)) }
            if NotesSoakClient.name(of: error) == "storeFailure" {
                try? await Task.sleep(for: .milliseconds(200))
            }
            return false
        }
        for note in notes where !note.content.hasPrefix("\(user)/") {
            tally.withLockedValue { $0.violate("\(user): listed another user's note \(note.content)") }
        }
        let mine = NotesSoakClient.texts(of: notes.filter { $0.content.hasPrefix(prefix) })
        if let pending {
            settle(pending, from: mine)
            lastSettled = "\(pending) settled at \(ContinuousClock.now)"
        }
        if mine != expected {
            let lost = expected.filter { mine[$0.key] != $0.value }
            let invented = mine.filter { expected[$0.key] == nil }
            let detail =
                (lost.map { "\($0.value) is \(mine[$0.key] ?? "gone")" } + invented.map { "\($0.value) appeared" })
                .prefix(3).joined(separator: "; ")
            var settled = lastSettled.map { " (last failure: \($0))" } ?? ""
            if let direct, let rows = try? await direct.fetchAll() {
                let table = Set(rows.filter { $0.content.hasPrefix(prefix) }.map(\.content))
                settled +=
                    "; the table itself: "
                    + (lost.map { "\($0.value) \(table.contains($0.value) ? "present" : "absent")" }
                    + invented.map { "\($0.value) \(table.contains($0.value) ? "present" : "absent")" }).prefix(3)
                    .joined(separator: ", ")
            }
            tally.withLockedValue {
                $0.violate(
                    "\(prefix): \(lost.count) acknowledged notes lost or changed, \(invented.count) unacknowledged "
                        + "ones: \(detail)\(settled)"
                )
            }
            expected = mine
        }
        return true
    }

    private mutating func settle(_ pending: Pending, from mine: [UUID: String]) {
        let committed: Bool
        switch pending {
        case .add(let text):
            let found = mine.first { $0.value == text && expected[$0.key] == nil }
            if let found { expected[found.key] = text }
            committed = found != nil
        case .edit(let id, let old, let new):
            committed = mine[id] == new
            if committed { expected[id] = new } else if mine[id] != old { return }
        case .remove(let id, let old):
            committed = mine[id] == nil
            if committed { expected[id] = nil } else if mine[id] != old { return }
        }
        tally.withLockedValue { counters in
            if committed {
                counters.settledCommitted += 1
            } else {
                counters.settledNotCommitted += 1
            }
        }
    }
}
