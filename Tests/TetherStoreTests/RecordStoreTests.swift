import Foundation
import Testing
import TetherTestSupport

@testable import TetherStore

struct RecordStoreTests {
    @Test(arguments: StoreKind.allCases)
    func insertedRecordsComeBackInInsertionOrder(kind: StoreKind) async throws {
        try await withTemporaryDirectory { directory in
            let store = try await kind.open(Note.self, in: directory)
            let notes = (0..<20).map { Note(date: Date(timeIntervalSinceReferenceDate: Double($0)), content: "n\($0)") }
            for note in notes { try await store.insert(note) }
            #expect(try await store.fetchAll() == notes)
            #expect(try await store.count() == 20)
            #expect(try await store.fetchOne(id: notes[7].id) == notes[7])
            #expect(try await store.fetchOne(id: UUID()) == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func insertOfAnExistingIDThrowsDuplicateIDAndKeepsTheStore(kind: StoreKind) async throws {
        try await withTemporaryDirectory { directory in
            let store = try await kind.open(Note.self, in: directory)
            let note = Note(content: "first")
            try await store.insert(note)
            var twin = note
            twin.content = "second"
            await expectStoreError(.duplicateID) { try await store.insert(twin) }
            #expect(try await store.fetchAll() == [note])
        }
    }

    @Test(arguments: StoreKind.persistent)
    func aBulkInsertWithADuplicateIDInsertsNothing(kind: StoreKind) async throws {
        try await withTemporaryDirectory { directory in
            let store = try await kind.open(Note.self, in: directory)
            let first = Note(content: "first")
            try await store.insert(first)
            let fresh = (0..<3).map { Note(content: "fresh \($0)") }
            await expectStoreError(.duplicateID) { try await kind.bulkInsert(fresh + [first], into: store) }
            await expectStoreError(.duplicateID) { try await kind.bulkInsert(fresh + [fresh[1]], into: store) }
            #expect(try await store.fetchAll() == [first])
            try await kind.bulkInsert(fresh, into: store)
            #expect(try await store.fetchAll() == [first] + fresh)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func updateReplacesInPlaceAndMissingIDsThrowNotFound(kind: StoreKind) async throws {
        try await withTemporaryDirectory { directory in
            let store = try await kind.open(Note.self, in: directory)
            var notes = (0..<3).map { Note(content: "n\($0)") }
            for note in notes { try await store.insert(note) }
            notes[1].content = "changed"
            notes[1].date = Date(timeIntervalSinceReferenceDate: 12.5)
            try await store.update(notes[1])
            #expect(try await store.fetchAll() == notes)
            await expectStoreError(.notFound) { try await store.update(Note(content: "ghost")) }
            #expect(try await store.fetchAll() == notes)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func upsertInsertsAtTheEndOrReplacesInPlace(kind: StoreKind) async throws {
        try await withTemporaryDirectory { directory in
            let store = try await kind.open(Note.self, in: directory)
            var notes = (0..<3).map { Note(content: "n\($0)") }
            for note in notes { try await store.upsert(note) }
            notes[0].content = "replaced"
            try await store.upsert(notes[0])
            let extra = Note(content: "extra")
            try await store.upsert(extra)
            #expect(try await store.fetchAll() == notes + [extra])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func deleteReportsWhetherThereWasSomethingToDelete(kind: StoreKind) async throws {
        try await withTemporaryDirectory { directory in
            let store = try await kind.open(Note.self, in: directory)
            let notes = (0..<4).map { Note(content: "n\($0)") }
            for note in notes { try await store.insert(note) }
            #expect(try await store.delete(id: notes[2].id))
            #expect(try await !store.delete(id: notes[2].id))
            #expect(try await !store.delete(id: UUID()))
            #expect(try await store.fetchAll() == [notes[0], notes[1], notes[3]])
            #expect(try await store.count() == 3)
            // A deleted id can be inserted again, at the end.
            try await store.insert(notes[2])
            #expect(try await store.fetchAll() == [notes[0], notes[1], notes[3], notes[2]])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func datesAndTextRoundTripExactly(kind: StoreKind) async throws {
        try await withTemporaryDirectory { directory in
            let megabyte = String(repeating: "é漢🙂x", count: 1 << 18)
            let notes = [
                Note(date: Date(timeIntervalSince1970: 1_700_000_000.123456), content: "sub-second date"),
                Note(date: Date(timeIntervalSinceReferenceDate: -1e9 + 0.000001), content: ""),
                Note(date: Date(), content: "Unicode: 欢迎使用MyNotes. 🙂 e\u{301} \u{0} <xml>&amp;</xml> \"quotes\""),
                Note(date: Date(timeIntervalSinceReferenceDate: 1e-7), content: megabyte),
            ]
            do {
                let store = try await kind.open(Note.self, in: directory)
                for note in notes { try await store.insert(note) }
                #expect(try await store.fetchAll() == notes)
            }
            if StoreKind.persistent.contains(kind) {
                let reopened = try await kind.open(Note.self, in: directory)
                let stored = try await reopened.fetchAll()
                #expect(stored == notes)
                #expect(
                    stored.map(\.date.timeIntervalSinceReferenceDate)
                        == notes.map(\.date.timeIntervalSinceReferenceDate)
                )
            }
        }
    }

    @Test(arguments: StoreKind.persistent)
    func everyChangeSurvivesClosingAndReopening(kind: StoreKind) async throws {
        try await withTemporaryDirectory { directory in
            var expected: [Note] = []
            do {
                let store = try await kind.open(Note.self, in: directory)
                for index in 0..<30 {
                    let note = Note(content: "note \(index)")
                    try await store.insert(note)
                    expected.append(note)
                }
                try await store.delete(id: expected[3].id)
                expected.remove(at: 3)
                expected[5].content = "updated"
                try await store.update(expected[5])
            }
            do {
                let store = try await kind.open(Note.self, in: directory)
                #expect(try await store.fetchAll() == expected)
                let more = Note(content: "after reopen")
                try await store.insert(more)
                expected.append(more)
            }
            let store = try await kind.open(Note.self, in: directory)
            #expect(try await store.fetchAll() == expected)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func concurrentWritersLoseNothing(kind: StoreKind) async throws {
        try await withTemporaryDirectory { directory in
            let notes = (0..<64).map { Note(content: "concurrent \($0)") }
            do {
                let store = try await kind.open(Note.self, in: directory)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for note in notes {
                        group.addTask { try await store.insert(note) }
                    }
                    try await group.waitForAll()
                }
                #expect(Set(try await store.fetchAll()) == Set(notes))
            }
            if StoreKind.persistent.contains(kind) {
                #expect(Set(try await kind.open(Note.self, in: directory).fetchAll()) == Set(notes))
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aHundredThousandRecordsLoadReopenAndStayCheapToChange(kind: StoreKind) async throws {
        try await withTemporaryDirectory { directory in
            let base = Date(timeIntervalSinceReferenceDate: 700_000_000.25)
            let notes = (0..<100_000).map { Note(date: base + Double($0) / 1000, content: "note number \($0)") }
            let extra = Note(content: "one more")
            var store = try await kind.open(Note.self, in: directory)
            try await kind.bulkInsert(notes, into: store)
            #expect(try await store.count() == 100_000)
            try await store.insert(extra)
            #expect(try await store.fetchOne(id: notes[54_321].id) == notes[54_321])
            #expect(try await store.delete(id: notes[0].id))
            if StoreKind.persistent.contains(kind) {
                store = MemoryStore<Note>()  // releases the file store, which closes it
                store = try await kind.open(Note.self, in: directory)
            }
            let all = try await store.fetchAll()
            #expect(all.count == 100_000)
            #expect(Array(all.prefix(3)) == Array(notes[1...3]))
            #expect(all.last == extra)
            #expect(try await store.fetchOne(id: notes[99_999].id) == notes[99_999])
        }
    }
}
