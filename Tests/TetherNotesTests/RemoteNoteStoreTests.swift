import Foundation
import NIOCore
import Testing
import TetherCore
import TetherNotes
import TetherSockets
import TetherStore

/// `RemoteNoteStore` against a scripted server: what the client holds when its reader does not keep up.
@Suite("RemoteNoteStore: bounded buffers against a server that pushes more than is read", .timeLimit(.minutes(1)))
struct RemoteNoteStoreTests {
    let codec = STXFrameCodec()

    @Test("a change stream that falls more than maxUnreadChanges behind fails with tooLarge instead of growing")
    func anUnreadChangeStreamIsBounded() async throws {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let pushed = RemoteNoteStore.maxUnreadChanges + 1
        let server = Task {
            for try await connection in listener.connections {
                var frames = connection.frames(codec).makeAsyncIterator()
                // subscribe, answered; then a list, answered after more changes than a stream keeps unread.
                let subscribe = try NotesWireFormat.decode(try #require(try await frames.next()).payload).requestID
                try await reply(.subscribed, id: subscribe, on: connection)
                let list = try NotesWireFormat.decode(try #require(try await frames.next()).payload).requestID
                var wire = ByteBuffer()
                let change = STXFrame(
                    destination: 2,
                    source: 1,
                    payload: try NotesWireFormat.encode(.changed(.removed(UUID())), requestID: 0)
                )
                for _ in 0..<pushed { try codec.encode(change, into: &wire) }
                let page = try NotesWireFormat.encode(.notes([], isLast: true), requestID: list)
                try codec.encode(STXFrame(destination: 2, source: 1, payload: page), into: &wire)
                try await connection.write(wire)
                _ = try? await frames.next()
                return
            }
        }
        let client = try await RemoteNoteStore.connect(host: "127.0.0.1", port: listener.localPort)
        let changes = try await client.changes()
        // The list's reply comes after every change: once it is here, the client has taken them all in.
        #expect(try await client.list().isEmpty)
        var read = 0
        do {
            for try await _ in changes { read += 1 }
            Issue.record("the change stream ended without an error")
        } catch let error as NotesError {
            #expect(error.code == .tooLarge)
        }
        #expect(read == RemoteNoteStore.maxUnreadChanges)
        await client.close()
        try await listener.close()
        _ = await server.result
    }

    func reply(_ message: NotesMessage, id: UInt32, on connection: TCPConnection) async throws {
        let payload = try NotesWireFormat.encode(message, requestID: id)
        try await connection.write(STXFrame(destination: 2, source: 1, payload: payload), using: codec)
    }
}
