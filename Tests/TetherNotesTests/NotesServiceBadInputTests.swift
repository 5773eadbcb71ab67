import Foundation
import NIOCore
import Testing
import TetherCore
import TetherNotes
import TetherSockets
import TetherStore

/// Bad input against a real server: each gets a typed error reply (or a close where the stream cannot be trusted),
/// and the store does not change.
@Suite("The notes service: bad frames and bad messages", .timeLimit(.minutes(1)))
struct NotesServiceBadInputTests {
    let codec = STXFrameCodec()

    /// Reads the server's next frame and decodes it.
    func nextReply(_ connection: TCPConnection) async throws -> (UInt32, NotesMessage) {
        var frames = connection.frames(codec).makeAsyncIterator()
        let frame = try #require(try await frames.next())
        return try NotesWireFormat.decode(frame.payload)
    }

    func send(_ message: NotesMessage, id: UInt32, on connection: TCPConnection) async throws {
        let payload = try NotesWireFormat.encode(message, requestID: id)
        try await connection.write(STXFrame(destination: 1, source: 9, payload: payload), using: codec)
    }

    @Test("a bad CRC is answered badChecksum; the next request on the connection is served")
    func badChecksum() async throws {
        let service = try await NotesServiceFixture()
        let connection = try await service.rawLoggedIn()
        var wire = try codec.encode(
            STXFrame(destination: 1, source: 9, payload: try NotesWireFormat.encode(.add("x"), requestID: 1))
        )
        wire.setInteger(wire.getInteger(at: wire.writerIndex - 1, as: UInt8.self)! ^ 0xFF, at: wire.writerIndex - 1)
        try await connection.write(wire)
        let (id, reply) = try await nextReply(connection)
        #expect(id == 0)
        guard case .failed(let error) = reply else { throw NotesError(code: .notFound, message: "\(reply)") }
        #expect(error.code == .badChecksum)
        try await send(.list, id: 2, on: connection)
        let (listID, list) = try await nextReply(connection)
        #expect(listID == 2 && list == .notes([], isLast: true))
        #expect(try await service.store.count() == 0)
        try await connection.close()
        await service.stop()
    }

    @Test("an unknown message kind is answered unknownMessage with its request id, not 0; nothing changes")
    func unknownMessage() async throws {
        let service = try await NotesServiceFixture()
        let connection = try await service.rawLoggedIn()
        try await connection.write(STXFrame(destination: 1, source: 9, bytes: [0x42, 7, 0, 0, 0, 1, 2]), using: codec)
        let (id, reply) = try await nextReply(connection)
        #expect(id == 7)
        guard case .failed(let error) = reply else { throw NotesError(code: .notFound, message: "\(reply)") }
        #expect(error.code == .unknownMessage)
        #expect(error.message.contains("request 7"))
        #expect(try await service.store.count() == 0)
        try await connection.close()
        await service.stop()
    }

    @Test("a malformed add (text that is not UTF-8) is answered malformedMessage; nothing is stored")
    func malformedAdd() async throws {
        let service = try await NotesServiceFixture()
        let connection = try await service.rawLoggedIn()
        try await connection.write(
            STXFrame(destination: 1, source: 9, bytes: [0x02, 3, 0, 0, 0, 0xC3, 0x28]),
            using: codec
        )
        let (_, reply) = try await nextReply(connection)
        guard case .failed(let error) = reply else { throw NotesError(code: .notFound, message: "\(reply)") }
        #expect(error.code == .malformedMessage)
        #expect(try await service.store.count() == 0)
        try await connection.close()
        await service.stop()
    }

    @Test("an add too long for its reply is refused tooLarge with its request id; nothing is stored, list still works")
    func anAddTooLongForItsReplyIsRefusedAndListKeepsWorking() async throws {
        let service = try await NotesServiceFixture()
        let connection = try await service.rawLoggedIn()
        // 65 520 bytes of text: the add fits in a frame, its `added` reply would not.
        let text = [UInt8](repeating: 0x61, count: 65_520)
        try await connection.write(STXFrame(destination: 1, source: 9, bytes: [0x02, 4, 0, 0, 0] + text), using: codec)
        let (id, reply) = try await nextReply(connection)
        #expect(id == 4)
        guard case .failed(let error) = reply else { throw NotesError(code: .notFound, message: "\(reply)") }
        #expect(error.code == .tooLarge)
        #expect(try await service.store.count() == 0)
        try await send(.list, id: 5, on: connection)
        let (listID, list) = try await nextReply(connection)
        #expect(listID == 5 && list == .notes([], isLast: true))
        try await connection.close()
        await service.stop()
    }

    @Test("a server with a lower payload limit lists in pages that fit it, and refuses a text its reply cannot carry")
    func aServerWithALowerPayloadLimitListsInPagesThatFit() async throws {
        let service = try await NotesServiceFixture(maxPayloadLength: 1_024)
        let client = try await service.client()
        var added: [Note] = []
        for index in 0..<10 { added.append(try await client.add(String(repeating: "\(index)", count: 300))) }
        #expect(try await client.list() == added)
        let tooLong = await #expect(throws: NotesError.self) {
            try await client.add(String(repeating: "x", count: 1_024 - 33))
        }
        #expect(tooLong?.code == .tooLarge)
        _ = try await client.add(String(repeating: "x", count: 1_024 - 34))
        #expect(try await service.store.count() == 11)
        #expect(try await client.list().count == 11)
        await client.close()
        await service.stop()
    }

    @Test("a store failure is answered storeFailure with a fixed message: no path, no database text")
    func aStoreFailureReplyCarriesNoDetail() async throws {
        let server = NotesServer(store: FailingNoteStore())
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let serving = Task { try await server.serve(listener) }
        let client = try await RemoteNoteStore.connect(host: "127.0.0.1", port: listener.localPort)
        let requests: [(String, @Sendable () async throws -> Void)] = [
            ("the store failed; nothing changed", { _ = try await client.list() }),
            ("the store failed; the change may or may not have been made", { _ = try await client.add("x") }),
        ]
        for (message, request) in requests {
            let failure = await #expect(throws: NotesError.self) { try await request() }
            #expect(failure?.code == .storeFailure)
            #expect(failure?.message == message)
        }
        await client.close()
        try await listener.close()
        serving.cancel()
        _ = await serving.result
    }

    @Test("garbage instead of a start byte (before authenticating) is answered outOfStep, then the server closes")
    func garbageClosesTheConnection() async throws {
        let service = try await NotesServiceFixture()
        let connection = try await service.raw()
        try await connection.write(ByteBuffer(string: "GET / HTTP/1.1\r\n\r\n"))
        let (id, reply) = try await nextReply(connection)
        #expect(id == 0)
        guard case .failed(let error) = reply else { throw NotesError(code: .notFound, message: "\(reply)") }
        #expect(error.code == .outOfStep)
        #expect(try await connection.readAvailable(timeout: .seconds(10)) == nil)
        #expect(try await service.store.count() == 0)
        await service.stop()
    }

    @Test("a header announcing more than the server's limit (before authenticating) is answered outOfStep, then closed")
    func oversizedFrame() async throws {
        let service = try await NotesServiceFixture(maxPayloadLength: 1_024)
        let connection = try await service.raw()
        // A header announcing 2 000 payload bytes, and none of them: the server must not wait for them.
        try await connection.write(ByteBuffer(bytes: [0x02, 1, 0, 9, 0, 0xD0, 0x07]))
        let (_, reply) = try await nextReply(connection)
        guard case .failed(let error) = reply else { throw NotesError(code: .notFound, message: "\(reply)") }
        #expect(error.code == .outOfStep)
        #expect(error.message.contains("frameTooLarge"))
        #expect(try await connection.readAvailable(timeout: .seconds(10)) == nil)
        await service.stop()
    }

    @Test("a client whose server goes away fails its waiting request and its change stream with connectionFailed")
    func serverGone() async throws {
        let service = try await NotesServiceFixture()
        let client = try await service.client()
        let changes = try await client.changes()
        await service.stop()
        // Closing the listener leaves accepted connections open; the server's connection ends with the task.
        let error = await #expect(throws: NotesError.self) {
            for try await _ in changes {}
        }
        #expect(error?.code == .connectionFailed)
        let request = await #expect(throws: NotesError.self) { try await client.list() }
        #expect(request?.code == .connectionFailed)
        await client.close()
    }
}
