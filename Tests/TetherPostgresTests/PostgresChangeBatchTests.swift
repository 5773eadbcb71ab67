import Foundation
import Testing
import TetherStore
import TetherTestSupport

@testable import TetherPostgres

/// The change feed reads the rows named by the notifications waiting for it together: a burst is reported
/// completely and in commit order, whatever the batches; each notification's rules hold within a batch.
@Suite(needsPostgreSQL, .timeLimit(.minutes(2)))
struct PostgresChangeBatchTests {
    @Test func aBurstLargerThanOneReadIsReportedCompletelyInCommitOrder() async throws {
        let url = try await freshDatabase()
        let watched = try await PostgresStore<Note>(url: url)
        let writer = try await PostgresStore<Note>(url: url)
        var changes = try await watched.changes().makeAsyncIterator()
        // One transaction: its 1,200 notifications arrive at once, more than one read takes.
        var notes = (0..<1_200).map { Note(content: "note \($0)") }
        #expect(notes.count > PostgresStore<Note>.changeBatchLimit * 2)
        try await writer.insert(contentsOf: notes)
        for note in notes { #expect(try await changes.next() == .inserted(note)) }
        // Then updates and deletions from concurrent writers, each waited for before the next kind starts (an
        // update read after its row's deletion is skipped, by the feed's rules).
        for index in 0..<240 { notes[index].content += ", edited" }
        let edited = notes
        try await withThrowingTaskGroup(of: Void.self) { group in
            for part in 0..<4 {
                group.addTask {
                    for index in stride(from: part, to: 240, by: 4) { try await writer.update(edited[index]) }
                }
            }
            try await group.waitForAll()
        }
        var updated = Set<UUID>()
        for _ in 0..<240 {
            guard case .updated(let note) = try await changes.next() else {
                Issue.record("expected an update")
                return
            }
            #expect(note == notes.first { $0.id == note.id })
            updated.insert(note.id)
        }
        #expect(updated == Set(notes.prefix(240).map(\.id)))
        for note in notes.suffix(120) { try await writer.delete(id: note.id) }
        for note in notes.suffix(120) { #expect(try await changes.next() == .deleted(note.id)) }
    }

    @Test func theRowsOfABatchAreReadInOneQueryAndAMissingRowIsAbsent() async throws {
        let store = try await PostgresStore<Note>(url: try await freshDatabase())
        var notes = (0..<3).map { Note(content: "row \($0)") }
        try await store.insert(contentsOf: notes)
        notes[1].content = "edited"
        try await store.update(notes[1])
        let keys = try notes.map { try RecordRowCoding<Note>.encodeID($0.id) }
        let missing = try RecordRowCoding<Note>.encodeID(UUID())
        let rows = try await store.fetchWithVersions(keys: keys + [missing])
        #expect(rows.count == 3)
        #expect(rows[missing] == nil)
        for (key, note) in zip(keys, notes) {
            #expect(rows[key]?.record == note)
            let single = try await store.fetchOneWithVersion(id: note.id)
            #expect(rows[key]?.version == single?.version)
        }
        #expect(try await store.fetchWithVersions(keys: []).isEmpty)
    }

    @Test func eachNotificationIsJudgedAgainstTheRowAsRead() throws {
        let id = UUID()
        let note = Note(id: id, content: "now")
        typealias Hint = PostgresChangeNotification.Hint<UUID>
        let cases: [(Hint, (record: Note, version: Int64)?, RecordChange<Note>?)] = [
            (.written(id, version: 3, isInsert: true), (note, 3), .inserted(note)),
            (.written(id, version: 3, isInsert: false), (note, 5), .updated(note)),
            (.written(id, version: 3, isInsert: false), (note, 2), nil),
            (.written(id, version: 3, isInsert: true), nil, nil),
            (.deleted(id, version: 3), nil, .deleted(id)),
            (.deleted(id, version: 3), (note, 4), nil),
        ]
        for (hint, current, expected) in cases {
            #expect(PostgresChangeNotification.change(for: hint, current: current) == expected)
        }
    }
}
