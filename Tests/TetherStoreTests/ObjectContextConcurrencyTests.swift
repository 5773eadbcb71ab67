import Foundation
import Testing
import TetherTestSupport

@testable import TetherStore

/// Optimistic locking across contexts and processes: snapshots keep the version they were read at, and a stored
/// model is checked under the write lock that migrates it.
struct ObjectContextConcurrencyTests {
    private func withContainer<T>(
        _ kind: ContainerKind,
        _ body: (PersistentContainer, URL) async throws -> T
    ) async throws -> T {
        try await withTemporaryDirectory { directory in
            let container = try await kind.container(name: "Notes", model: notesModel, in: directory)
            try container.loadPersistentStores()
            return try await body(container, directory)
        }
    }

    @Test(arguments: ContainerKind.allCases)
    func anUpdateFromASnapshotOlderThanAnotherContextsSaveConflictsEvenAfterAFetch(kind: ContainerKind) async throws {
        try await withContainer(kind) { container, _ in
            let first = container.viewContext
            let second = container.newBackgroundContext()
            try first.insert(entityName: "Note", values: ["content": .string("v1"), "date": .date(Date())])
            try first.save()
            let request = FetchRequest(entityName: "Note")
            var old = try #require(try first.fetch(request).first)
            var newer = try #require(try second.fetch(request).first)
            newer["content"] = .string("saved by the second context")
            try second.update(newer)
            try second.save()
            // The first context fetches again (and sees the second's save), then updates its older snapshot.
            #expect(try first.fetch(request).first?["content"] == .string("saved by the second context"))
            old["content"] = .string("from the older snapshot")
            try first.update(old)
            await expectStoreError(.conflict) { try first.save() }
            first.rollback()
            #expect(try first.fetch(request).first?["content"] == .string("saved by the second context"))
            // A snapshot this context saved itself stays current: saving it again is no conflict.
            var mine = try #require(try first.fetch(request).first)
            mine["content"] = .string("mine, once")
            try first.update(mine)
            try first.save()
            mine["content"] = .string("mine, twice")
            try first.update(mine)
            try first.save()
            #expect(try second.fetch(request).first?["content"] == .string("mine, twice"))
        }
    }

    @Test func aMigrationByAnotherProcessBetweenTheCheckAndTheWriteIsSeenUnderTheWriteLock() async throws {
        try await withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("Model.sqlite")
            func model(adding attribute: String) -> ObjectModel {
                ObjectModel(entities: [
                    EntityDescription(
                        name: "Note",
                        attributes: [
                            AttributeDescription(name: "content", type: .string),
                            AttributeDescription(name: attribute, type: .integer, defaultValue: .integer(0)),
                        ]
                    )
                ])
            }
            let original = ObjectModel(entities: [
                EntityDescription(name: "Note", attributes: [AttributeDescription(name: "content", type: .string)])
            ])
            _ = try SQLiteObjectStore(url: url, model: original)
            // This process checks the file (still the original model), then another process migrates it to a model
            // that this one's cannot be migrated from, before this one writes.
            let error = await expectStoreError(.incompatibleModel) {
                _ = try SQLiteObjectStore(url: url, model: model(adding: "pinned")) {
                    _ = try? SQLiteObjectStore(url: url, model: model(adding: "rank"))
                }
            }
            #expect(error?.message.contains("rank") == true)
            // The other process's migration stands.
            _ = try SQLiteObjectStore(url: url, model: model(adding: "rank"))
        }
    }
}
