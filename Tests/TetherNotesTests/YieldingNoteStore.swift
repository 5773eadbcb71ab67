import Foundation
import TetherConcurrency
import TetherStore
import TetherTestSupport

/// A store whose writes return after a seeded number of yields once committed: a store whose completion reaches the
/// server late, as any store's may. What the server publishes must follow the commits, not the completions.
struct YieldingNoteStore: RecordStore {
    let base: SQLiteStore<Note>
    let random: LockedBox<SeededGenerator>

    init(base: SQLiteStore<Note>, seed: UInt64) {
        self.base = base
        self.random = LockedBox(SeededGenerator(seed: seed))
    }

    private func yieldAfterCommit() async {
        let count = random.withLock { Int.random(in: 0..<8, using: &$0) }
        for _ in 0..<count { await Task.yield() }
    }

    func insert(_ record: Note) async throws { try await base.insert(record) }
    func update(_ record: Note) async throws {
        try await base.update(record)
        await yieldAfterCommit()
    }
    func upsert(_ record: Note) async throws {
        try await base.upsert(record)
        await yieldAfterCommit()
    }
    func delete(id: UUID) async throws -> Bool {
        let deleted = try await base.delete(id: id)
        await yieldAfterCommit()
        return deleted
    }
    func fetchAll() async throws -> [Note] { try await base.fetchAll() }
    func fetchOne(id: UUID) async throws -> Note? { try await base.fetchOne(id: id) }
    func count() async throws -> Int { try await base.count() }
}
