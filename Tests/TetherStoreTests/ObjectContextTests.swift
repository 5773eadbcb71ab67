import Foundation
import Testing
import TetherConcurrency
import TetherTestSupport

@testable import TetherStore

let notesModel = ObjectModel(entities: [
    EntityDescription(
        name: "Note",
        attributes: [
            AttributeDescription(name: "content", type: .string),
            AttributeDescription(name: "date", type: .date),
            AttributeDescription(name: "rank", type: .integer, defaultValue: .integer(0)),
            AttributeDescription(name: "tag", type: .string, isOptional: true),
        ]
    ),
    EntityDescription(name: "Folder", attributes: [AttributeDescription(name: "name", type: .string)]),
])

/// Collects the object context notifications posted while it is alive.
// Sendable: `entries` is in a `LockedBox`; `tokens` is set in `init` and only read again in `deinit`.
final class NotificationLog: @unchecked Sendable {
    private let entries = LockedBox<[(Notification.Name, [String: Set<ObjectID>])]>([])
    private var tokens: [any NSObjectProtocol] = []

    init(_ context: ObjectContext) {
        for name in [Notification.Name.objectContextObjectsDidChange, .objectContextDidSave] {
            tokens.append(
                NotificationCenter.default.addObserver(forName: name, object: context, queue: nil) { [entries] note in
                    let info = (note.userInfo as? [String: Set<ObjectID>]) ?? [:]
                    entries.withLock { $0.append((note.name, info)) }
                }
            )
        }
    }

    deinit {
        for token in tokens { NotificationCenter.default.removeObserver(token) }
    }

    var all: [(Notification.Name, [String: Set<ObjectID>])] { entries.withLock { $0 } }
}

struct ObjectContextTests {
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
    func insertSaveAndFetchWithPredicateSortLimitAndOffset(kind: ContainerKind) async throws {
        try await withContainer(kind) { container, _ in
            let context = container.viewContext
            let base = Date(timeIntervalSinceReferenceDate: 800_000_000.123456)
            for (index, text) in ["banana", "Apple", "cherry", "apple pie", "date"].enumerated() {
                try context.insert(
                    entityName: "Note",
                    values: [
                        "content": .string(text), "date": .date(base + Double(index)),
                        "rank": .integer(Int64(index % 2)),
                    ]
                )
            }
            #expect(context.hasChanges)
            #expect(context.insertedObjects.count == 5)
            try context.save()
            #expect(!context.hasChanges)

            let all = try context.fetch(FetchRequest(entityName: "Note"))
            #expect(
                all.map { $0["content"] } == ["banana", "Apple", "cherry", "apple pie", "date"].map { .string($0) }
            )
            #expect(all[1]["date"] == .date(base + 1))
            let sorted = try context.fetch(FetchRequest(entityName: "Note", sortDescriptors: [.init(key: "content")]))
            #expect(
                sorted.map { $0["content"] } == ["Apple", "apple pie", "banana", "cherry", "date"].map { .string($0) }
            )
            let byRankThenInsertion = try context.fetch(
                FetchRequest(entityName: "Note", sortDescriptors: [.init(key: "rank", ascending: false)])
            )
            #expect(
                byRankThenInsertion.map { $0["content"] }
                    == ["Apple", "apple pie", "banana", "cherry", "date"].map { .string($0) }
            )
            let apples = try context.fetch(
                FetchRequest(entityName: "Note", predicate: .contains("content", "APPLE", caseInsensitive: true))
            )
            #expect(apples.count == 2)
            let paged = try context.fetch(
                FetchRequest(
                    entityName: "Note",
                    predicate: .greaterOrEqual("date", .date(base + 1)) && !.equal("content", .string("date")),
                    sortDescriptors: [.init(key: "content", ascending: false)],
                    fetchLimit: 2,
                    fetchOffset: 1
                )
            )
            #expect(paged.map { $0["content"] } == [.string("apple pie"), .string("Apple")])
            #expect(try context.count(for: FetchRequest(entityName: "Note", predicate: .equal("tag", nil))) == 5)
            #expect(try context.count(for: FetchRequest(entityName: "Folder")) == 0)
        }
    }

    @Test(arguments: ContainerKind.allCases)
    func whatOneContextSavedIsVisibleToAnother(kind: ContainerKind) async throws {
        try await withContainer(kind) { container, _ in
            let writer = container.newBackgroundContext()
            let reader = container.viewContext
            let note = try writer.insert(
                entityName: "Note",
                values: ["content": .string("shared"), "date": .date(Date())]
            )
            #expect(try reader.fetch(FetchRequest(entityName: "Note")).isEmpty)
            try writer.save()
            #expect(try reader.object(with: note.id) == note)
            var changed = note
            changed["content"] = .string("changed")
            try writer.update(changed)
            try writer.save()
            #expect(try reader.fetch(FetchRequest(entityName: "Note")).first?["content"] == .string("changed"))
            writer.delete(changed)
            try writer.save()
            #expect(try reader.object(with: note.id) == nil)
        }
    }

    @Test(arguments: ContainerKind.allCases)
    func rollbackDiscardsPendingChanges(kind: ContainerKind) async throws {
        try await withContainer(kind) { container, _ in
            let context = container.viewContext
            let kept = try context.insert(
                entityName: "Note",
                values: ["content": .string("kept"), "date": .date(Date())]
            )
            try context.save()
            try context.insert(entityName: "Note", values: ["content": .string("dropped"), "date": .date(Date())])
            var edited = kept
            edited["content"] = .string("edited")
            try context.update(edited)
            #expect(
                try context.fetch(FetchRequest(entityName: "Note")).map { $0["content"] } == [
                    .string("edited"), .string("dropped"),
                ]
            )
            #expect(context.updatedObjects == [edited])
            context.rollback()
            #expect(!context.hasChanges)
            #expect(try context.fetch(FetchRequest(entityName: "Note")) == [kept])
        }
    }

    @Test(arguments: ContainerKind.allCases)
    func savingAnObjectAnotherContextChangedIsAConflictAndWritesNothing(kind: ContainerKind) async throws {
        try await withContainer(kind) { container, _ in
            let first = container.viewContext
            let second = container.newBackgroundContext()
            let note = try first.insert(entityName: "Note", values: ["content": .string("v1"), "date": .date(Date())])
            try first.save()
            var fromSecond = try #require(try second.object(with: note.id))
            var fromFirst = note
            fromFirst["content"] = .string("first wins")
            try first.update(fromFirst)
            try first.save()
            fromSecond["content"] = .string("second loses")
            try second.update(fromSecond)
            let extra = try second.insert(
                entityName: "Note",
                values: ["content": .string("extra"), "date": .date(Date())]
            )
            await expectStoreError(.conflict) { try second.save() }
            #expect(second.hasChanges)
            #expect(try first.fetch(FetchRequest(entityName: "Note")).map { $0["content"] } == [.string("first wins")])
            #expect(try first.object(with: extra.id) == nil)
            second.rollback()
            #expect(try second.object(with: note.id)?["content"] == .string("first wins"))
        }
    }

    @Test(arguments: ContainerKind.allCases)
    func validationRejectsUnknownNamesWrongTypesAndMissingValues(kind: ContainerKind) async throws {
        try await withContainer(kind) { container, _ in
            let context = container.viewContext
            await expectStoreError(.validation) { try context.insert(entityName: "Nope") }
            await expectStoreError(.validation) {
                try context.insert(entityName: "Note", values: ["nope": .integer(1)])
            }
            await expectStoreError(.validation) {
                try context.insert(entityName: "Note", values: ["content": .integer(1)])
            }
            let partial = try context.insert(entityName: "Note", values: ["content": .string("no date")])
            #expect(partial["rank"] == .integer(0))
            await expectStoreError(.validation) { try context.save() }
            #expect(context.hasChanges)
            await expectStoreError(.validation) {
                try context.fetch(FetchRequest(entityName: "Note", predicate: .equal("missing", nil)))
            }
            await expectStoreError(.validation) {
                try context.fetch(FetchRequest(entityName: "Note", sortDescriptors: [.init(key: "missing")]))
            }
            var fixed = partial
            fixed["date"] = .date(Date(timeIntervalSince1970: 0))
            try context.update(fixed)
            try context.save()
            #expect(try context.count(for: FetchRequest(entityName: "Note")) == 1)
        }
    }

    @Test(arguments: ContainerKind.allCases)
    func notificationsReportInsertsUpdatesDeletesAndSaves(kind: ContainerKind) async throws {
        try await withContainer(kind) { container, _ in
            let context = container.newBackgroundContext()
            let log = NotificationLog(context)
            let note = try context.insert(entityName: "Note", values: ["content": .string("a"), "date": .date(Date())])
            try context.save()
            context.delete(note)
            try context.save()
            let entries = log.all
            #expect(
                entries.map(\.0) == [
                    .objectContextObjectsDidChange, .objectContextDidSave, .objectContextObjectsDidChange,
                    .objectContextDidSave,
                ]
            )
            #expect(entries[1].1[ObjectContextNotificationKey.inserted] == [note.id])
            #expect(entries[3].1[ObjectContextNotificationKey.deleted] == [note.id])
        }
    }

    @Test(arguments: ContainerKind.persistent)
    func savedObjectsSurviveReopeningAndDatesStayExact(kind: ContainerKind) async throws {
        try await withTemporaryDirectory { directory in
            let date = Date(timeIntervalSince1970: 1_700_000_000.123456)
            let id: ObjectID
            do {
                let container = try await kind.container(name: "N", model: notesModel, in: directory)
                try container.loadPersistentStores()
                id = try container.viewContext.insert(
                    entityName: "Note",
                    values: ["content": .string("persisted 🙂"), "date": .date(date)]
                ).id
                try container.viewContext.save()
            }
            let container = try await kind.container(name: "N", model: notesModel, in: directory)
            try container.loadPersistentStores()
            let object = try #require(try container.viewContext.object(with: id))
            #expect(object["date"] == .date(date))
            #expect(object["content"] == .string("persisted 🙂"))
        }
    }

    @Test(arguments: [ContainerKind.sqlite, .binary])
    func addingDefaultedAttributesMigratesAndOtherChangesAreIncompatible(kind: ContainerKind) async throws {
        try await withTemporaryDirectory { directory in
            let storeType = kind.storeType(in: directory)
            let storeURL: URL
            switch storeType {
            case .sqlite(let url), .binary(let url): storeURL = url
            case .inMemory, .external: return
            }
            do {
                let container = PersistentContainer(name: "N", model: notesModel, storeType: storeType)
                try container.loadPersistentStores()
                try container.viewContext.insert(
                    entityName: "Note",
                    values: ["content": .string("old"), "date": .date(Date())]
                )
                try container.viewContext.save()
            }
            var incompatible = notesModel
            incompatible.entities[0].attributes[0].type = .binary
            let before = try contents(of: storeURL)
            await expectStoreError(.incompatibleModel) {
                try PersistentContainer(name: "N", model: incompatible, storeType: storeType).loadPersistentStores()
            }
            #expect(try contents(of: storeURL) == before)

            var extended = notesModel
            extended.entities[0].attributes.append(
                AttributeDescription(name: "pinned", type: .boolean, defaultValue: .boolean(false))
            )
            extended.entities.append(
                EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "label", type: .string)])
            )
            let container = PersistentContainer(name: "N", model: extended, storeType: storeType)
            try container.loadPersistentStores()
            let objects = try container.viewContext.fetch(FetchRequest(entityName: "Note"))
            #expect(objects.first?["pinned"] == .boolean(false))
            #expect(try container.viewContext.count(for: FetchRequest(entityName: "Tag")) == 0)
        }
    }

    @Test(arguments: [ContainerKind.sqlite, .binary])
    func aDamagedStoreFileIsCorruptDataAndKeepsItsBytes(kind: ContainerKind) async throws {
        try await withTemporaryDirectory { directory in
            let storeType = kind.storeType(in: directory)
            let url: URL
            switch storeType {
            case .sqlite(let file), .binary(let file): url = file
            case .inMemory, .external: return
            }
            let bytes = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            try bytes.write(to: url)
            await expectStoreError(.corruptData) {
                try PersistentContainer(name: "N", model: notesModel, storeType: storeType).loadPersistentStores()
            }
            #expect(try sameElements(contents(of: url), bytes))
        }
    }

    @Test func aSecondContainerOnTheSameBinaryFileIsLocked() async throws {
        try await withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("x.binary")
            let first = PersistentContainer(name: "A", model: notesModel, storeType: .binary(url))
            try first.loadPersistentStores()
            await expectStoreError(.locked) {
                try PersistentContainer(name: "B", model: notesModel, storeType: .binary(url)).loadPersistentStores()
            }
        }
    }

    @Test(arguments: ContainerKind.allCases)
    func contextsSavingConcurrentlyLoseNothing(kind: ContainerKind) async throws {
        try await withContainer(kind) { container, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<4 {
                    group.addTask {
                        let context = container.newBackgroundContext()
                        for index in 0..<25 {
                            try context.insert(
                                entityName: "Note",
                                values: ["content": .string("w\(worker)-\(index)"), "date": .date(Date())]
                            )
                            if index % 5 == 4 { try context.save() }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try container.viewContext.count(for: FetchRequest(entityName: "Note")) == 100)
        }
    }

    @Test func predicatesFollowTheComparisonRules() {
        let object = ManagedObject(
            id: ObjectID(entityName: "Note"),
            values: ["content": .string("Hello"), "rank": .integer(3), "score": .double(2.5)]
        )
        #expect(ObjectPredicate.all.evaluate(object))
        #expect(ObjectPredicate.equal("content", .string("Hello")).evaluate(object))
        #expect(!ObjectPredicate.equal("rank", .double(3)).evaluate(object))
        #expect(!ObjectPredicate.notEqual("rank", .double(4)).evaluate(object))
        #expect(ObjectPredicate.notEqual("tag", .string("x")).evaluate(object))
        #expect(ObjectPredicate.equal("tag", nil).evaluate(object))
        #expect(ObjectPredicate.notEqual("content", nil).evaluate(object))
        #expect(!ObjectPredicate.less("tag", .string("z")).evaluate(object))
        #expect(ObjectPredicate.less("rank", .integer(4)).evaluate(object))
        #expect(ObjectPredicate.lessOrEqual("rank", .integer(3)).evaluate(object))
        #expect(!ObjectPredicate.greater("rank", .integer(3)).evaluate(object))
        #expect(ObjectPredicate.beginsWith("content", "he", caseInsensitive: true).evaluate(object))
        #expect(!ObjectPredicate.beginsWith("content", "he").evaluate(object))
        #expect(!ObjectPredicate.contains("content", "LL").evaluate(object))
        #expect(ObjectPredicate.isIn("rank", [.integer(1), .integer(3)]).evaluate(object))
        #expect((ObjectPredicate.equal("rank", .integer(1)) || .greater("score", .double(2))).evaluate(object))
        #expect(!(ObjectPredicate.equal("rank", .integer(3)) && .greater("score", .double(3))).evaluate(object))
        #expect(
            ObjectID(entityName: "Note", uuid: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!).description
                == "tether://Note/E621E1F8-C36C-495A-93FC-0C247A3E6E5F"
        )
    }
}
