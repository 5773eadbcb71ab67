import Foundation
import NIOCore
import Testing
import TetherCore
import TetherNotes
import TetherSockets
import TetherStore
import TetherTestSupport

@Suite(
    "The notes service over loopback: a SQLite server with accounts, logged-in clients, watchers",
    .timeLimit(.minutes(2))
)
struct NotesServiceTests {
    @Test("add, list, edit, remove through the server, as the local store sees them")
    func crud() async throws {
        let service = try await NotesServiceFixture()
        let client = try await service.client()
        let milk = try await client.add("Buy milk")
        let eggs = try await client.add("Eggs")
        #expect(try await client.list() == [milk, eggs])
        let edited = try await client.edit(milk.id, text: "Buy oat milk")
        #expect(edited.content == "Buy oat milk" && edited.id == milk.id)
        try await client.remove(eggs.id)
        #expect(try await client.list() == [edited])
        #expect(try await service.store.fetchAll() == [edited])
        await client.close()
        await service.stop()
    }

    @Test("an edit or a remove of a note that does not exist is notFound, and nothing changes")
    func notFound() async throws {
        let service = try await NotesServiceFixture()
        let client = try await service.client()
        let kept = try await client.add("kept")
        let missing = UUID()
        let edit = await #expect(throws: NotesError.self) { try await client.edit(missing, text: "x") }
        #expect(edit?.code == .notFound)
        let remove = await #expect(throws: NotesError.self) { try await client.remove(missing) }
        #expect(remove?.code == .notFound)
        #expect(try await service.store.fetchAll() == [kept])
        await client.close()
        await service.stop()
    }

    @Test("a watcher gets every change another client makes, in order")
    func watcherSeesChanges() async throws {
        let service = try await NotesServiceFixture()
        let watcher = try await service.client()
        let changes = try await watcher.changes()
        let writer = try await service.client()
        let note = try await writer.add("first")
        let edited = try await writer.edit(note.id, text: "first, edited")
        try await writer.remove(note.id)
        var seen: [NoteChange] = []
        for try await change in changes {
            seen.append(change)
            if seen.count == 3 { break }
        }
        #expect(seen == [.added(note), .edited(edited), .removed(note.id)])
        await writer.close()
        await watcher.close()
        await service.stop()
    }

    @Test("a list longer than one frame arrives whole, in pages")
    func longList() async throws {
        let service = try await NotesServiceFixture()
        let client = try await service.client()
        var added: [Note] = []
        for index in 0..<20 { added.append(try await client.add(String(repeating: "\(index % 10)", count: 8_000))) }
        #expect(try await client.list() == added)
        await client.close()
        await service.stop()
    }

    @Test("a thousand subscribed clients on one server each get a change")
    func aThousandSubscribers() async throws {
        let service = try await NotesServiceFixture(
            limits: NotesServerLimits(connectionsPerAddress: 1_100, connectionsPerUser: 1_100)
        )
        let count = 1_000
        var clients: [RemoteNoteStore] = []
        var streams: [AsyncThrowingStream<NoteChange, any Error>] = []
        for _ in 0..<count {
            let client = try await service.client()
            clients.append(client)
            streams.append(try await client.changes())
        }
        #expect(service.server.subscriberCount == count)
        let note = try await clients[0].add("to everyone")
        let received = try await withThrowingTaskGroup(of: Bool.self) { group in
            for stream in streams {
                group.addTask {
                    for try await change in stream { return change == .added(note) }
                    return false
                }
            }
            var received = 0
            for try await got in group where got { received += 1 }
            return received
        }
        #expect(received == count)
        for client in clients { await client.close() }
        await service.stop()
    }
}

extension NotesServiceTests {
    @Test(
        "an edit and a remove of one note raced on two connections: the watcher always ends where the store does",
        arguments: SeededGenerator.seeds(first: 4_000, count: 1)
    )
    func racedEditAndRemoveArePushedInCommitOrder(seed: UInt64) async throws {
        let store = try SQLiteStore<Note>.inMemory(tableName: "Note")
        let server = NotesServer(store: YieldingNoteStore(base: store, seed: seed))
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let serving = Task { try await server.serve(listener) }
        func client() async throws -> RemoteNoteStore {
            try await RemoteNoteStore.connect(host: "127.0.0.1", port: listener.localPort)
        }
        let (editor, remover, watcher) = (
            try await client(), try await client(), try await client()
        )
        var changes = try await watcher.changes().makeAsyncIterator()
        var random = SeededGenerator(seed: seed)
        var seen: [UUID: Note] = [:]
        for round in 0..<600 {
            let note = try await editor.add("round \(round)")
            // Each side starts after a seeded number of yields, so that either may commit first.
            let (editYields, removeYields) = (
                Int.random(in: 0..<4, using: &random), Int.random(in: 0..<4, using: &random)
            )
            async let edited: Bool = {
                for _ in 0..<editYields { await Task.yield() }
                return (try? await editor.edit(note.id, text: "round \(round), edited")) != nil
            }()
            async let removed: Bool = {
                for _ in 0..<removeYields { await Task.yield() }
                return (try? await remover.remove(note.id)) != nil
            }()
            let pushes = 1 + (await edited ? 1 : 0) + (await removed ? 1 : 0)
            for _ in 0..<pushes {
                switch try #require(try await changes.next()) {
                case .added(let added), .edited(let added): seen[added.id] = added
                case .removed(let id): seen[id] = nil
                }
            }
            let stored = try await store.fetchAll()
            guard Set(seen.values) == Set(stored) else {
                Issue.record("seed \(seed), round \(round): the watcher holds \(seen.values), the store \(stored)")
                break
            }
        }
        for client in [editor, remover, watcher] { await client.close() }
        try await listener.close()
        serving.cancel()
        _ = await serving.result
    }
}

extension NotesServiceTests {
    @Test("an edit whose note is removed between its read and its write is answered notFound, not storeFailure")
    func anEditOfANoteRemovedMeanwhileIsNotFound() async throws {
        let server = NotesServer(store: VanishingNoteStore())
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let serving = Task { try await server.serve(listener) }
        let client = try await RemoteNoteStore.connect(host: "127.0.0.1", port: listener.localPort)
        let id = UUID()
        let failure = await #expect(throws: NotesError.self) { try await client.edit(id, text: "after") }
        #expect(failure?.code == .notFound)
        #expect(failure?.message == "no note \(id.uuidString)")
        await client.close()
        try await listener.close()
        serving.cancel()
        _ = await serving.result
    }
}
