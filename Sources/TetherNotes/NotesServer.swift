public import Logging
import NIOCore
import TetherConcurrency
import TetherCore
public import TetherSockets
public import TetherStore

import struct Foundation.Date
import struct Foundation.UUID

/// The notes service: the seed's STX frames carrying the notes protocol (see <doc:NotesProtocol>) over TCP or TLS,
/// on any `RecordStore` of notes.
///
/// ```swift
/// let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
/// let server = NotesServer(store: try SQLiteStore<Note>(url: file, tableName: "Note"))
/// try await server.serve(listener)  // until the listener closes
/// ```
///
/// Each connection's requests are carried out in order; its replies and the changes pushed to it are written in
/// one order. Every change made through any connection is pushed to every subscribed connection, in the order the
/// store committed them: on its own store (``NotesChangeSource/local``) the server makes one change at a time, and
/// publishes it before the next.
public final class NotesServer: Sendable {
    private let dao: NoteDAO
    private let hub: NotesChangeHub
    private let relay: NotesChangeRelay?

    /// With a change feed: one element each time the server's feed is subscribed to and listening (for tests).
    var feedSubscriptions: AsyncStream<Void>? { relay?.subscriptions }
    private let codec: STXFrameCodec
    private let maxPayloadLength: Int
    /// The longest a subscribe request waits for a change feed that reconnects.
    private let feedWait: Duration = .seconds(10)
    private let writeGate = NotesWriteGate()
    private let nextConnection = LockedBox<UInt64>(0)
    private let logger: Logger

    /// A server on `store`.
    /// - Parameters:
    ///   - store: where the notes live.
    ///   - maxPayloadLength: the largest frame payload accepted and written, from ``minPayloadLength`` to the
    ///     protocol's 65 535 (a value outside is brought to the nearer end); a header announcing more ends the
    ///     connection with an `.outOfStep` error, and an add or an edit whose note would not fit in a reply (a text
    ///     over `NotesWireFormat.maxTextLength(forPayloadLength:)` bytes) is refused with `.tooLarge`. Default: the
    ///     protocol's 65 535.
    ///   - logger: logs each connection's end and each failed request at `.debug`.
    public convenience init(
        store: any RecordStore<Note>,
        maxPayloadLength: Int = NotesWireFormat.maxPayloadLength,
        logger: Logger = Logger(label: "tether.notes.server")
    ) {
        self.init(dao: NoteDAO(store: store), maxPayloadLength: maxPayloadLength, logger: logger)
    }

    /// A server on the store of `dao` (`NoteDAO.open(_:directory:)` opens one of the app's store kinds).
    /// - Parameters:
    ///   - dao: the notes.
    ///   - changes: where the changes pushed to subscribers come from: the ones made through this server (the
    ///     default), or a feed of the store's changes when other servers write to it too.
    ///   - maxPayloadLength: the largest frame payload accepted and written, from ``minPayloadLength`` to the
    ///     protocol's 65 535 (a value outside is brought to the nearer end); a header announcing more ends the
    ///     connection with an `.outOfStep` error, and an add or an edit whose note would not fit in a reply (a text
    ///     over `NotesWireFormat.maxTextLength(forPayloadLength:)` bytes) is refused with `.tooLarge`. Default: the
    ///     protocol's 65 535.
    ///   - logger: logs each connection's end and each failed request at `.debug`.
    public init(
        dao: NoteDAO,
        changes: NotesChangeSource = .local,
        maxPayloadLength: Int = NotesWireFormat.maxPayloadLength,
        logger: Logger = Logger(label: "tether.notes.server")
    ) {
        self.dao = dao
        let hub = NotesChangeHub()
        self.hub = hub
        if case .feed(let subscribe) = changes.kind {
            relay = NotesChangeRelay(subscribe: subscribe, hub: hub, logger: logger)
        } else {
            relay = nil
        }
        let limit = min(max(maxPayloadLength, Self.minPayloadLength), NotesWireFormat.maxPayloadLength)
        self.maxPayloadLength = limit
        self.codec = STXFrameCodec(maxPayloadLength: limit)
        self.logger = logger
    }

    /// The lowest payload limit a server takes: room for a note of 30 bytes of text in every reply.
    public static let minPayloadLength = 64

    /// The number of connections subscribed to changes.
    public var subscriberCount: Int { hub.count }

    /// Serves every connection of `listener` until it closes (or the task is cancelled).
    ///
    /// With a ``NotesChangeSource/feed(_:)``, subscribes to it first (a server serving several listeners at once
    /// shares one subscription); the feed's changes are pushed while at least one listener is served.
    /// - Parameters:
    ///   - listener: the connections to serve.
    ///   - ready: called once, when the server is subscribed to its feed and accepts connections (a command prints
    ///     its `listening on` line here).
    /// - Throws: the listener's error, or the feed's when its first subscription fails.
    public func serve(_ listener: TCPListener, ready: @Sendable () -> Void = {}) async throws {
        try await relay?.join()
        defer { relay?.leave() }
        ready()
        if #available(macOS 14, iOS 17, tvOS 17, *) {
            try await withThrowingDiscardingTaskGroup { group in
                for try await connection in listener.connections {
                    group.addTask { await self.serve(connection) }
                }
            }
        } else {
            // A plain task group keeps every finished child until it is awaited: a task per client instead.
            for try await connection in listener.connections {
                Task { await self.serve(connection) }
            }
        }
    }

    /// Serves one connection until it ends.
    public func serve(_ connection: TCPConnection) async {
        let id = nextConnection.withLock {
            $0 += 1
            return $0
        }
        let outbox = NotesOutbox()
        async let writing: Void = write(outbox, to: connection)
        var session = NotesServerSession(maxPayloadLength: maxPayloadLength)
        await read(connection, session: &session, id: id, outbox: outbox)
        hub.unsubscribe(id)
        outbox.finish()
        await writing
        try? await connection.close()
    }

    private func write(_ outbox: NotesOutbox, to connection: TCPConnection) async {
        for await frame in outbox.stream {
            do {
                try await connection.write(frame, using: codec, timeout: .seconds(30))
            } catch {
                logger.debug("notes connection: write failed: \(error)")
                break
            }
        }
        // The outbox ended (the reader is done, or a subscriber fell too far behind) or a write failed.
        try? await connection.close()
    }

    private func read(
        _ connection: TCPConnection,
        session: inout NotesServerSession,
        id: UInt64,
        outbox: NotesOutbox
    ) async {
        while session.isOpen {
            do {
                for try await frame in connection.frames(codec) {
                    await execute(session.received(frame), session: &session, id: id, outbox: outbox)
                    if !session.isOpen { return }
                }
                await execute(session.ended(), session: &session, id: id, outbox: outbox)
            } catch let error as FramingError {
                await execute(session.framingFailed(error), session: &session, id: id, outbox: outbox)
                // A bad checksum: the frame's bytes are still buffered; drop them and read on.
                if session.isOpen, let bytes = error.bytes {
                    _ = try? await connection.read(toLength: bytes.readableBytes, timeout: .seconds(5))
                }
            } catch {
                logger.debug("notes connection: \(error)")
                await execute(session.ended(), session: &session, id: id, outbox: outbox)
            }
        }
    }

    private func execute(
        _ actions: [NotesServerSession.Action],
        session: inout NotesServerSession,
        id: UInt64,
        outbox: NotesOutbox
    ) async {
        for action in actions {
            switch action {
            case .send(let frame):
                outbox.send(frame)
            case .perform(let requestID, let operation):
                guard relay == nil, operation != .list else {
                    // With a feed, changes come back through it in the database's commit order.
                    let result = await perform(operation)
                    await execute(
                        session.stored(requestID: requestID, result),
                        session: &session,
                        id: id,
                        outbox: outbox
                    )
                    continue
                }
                // On its own store, a change is committed and published behind the gate: pushed in commit order.
                await writeGate.run {
                    let actions = session.stored(requestID: requestID, await perform(operation))
                    await execute(actions, session: &session, id: id, outbox: outbox)
                }
            case .subscribe(let requestID, let destination, let source):
                var isSubscribed = true
                if let relay {
                    // Held until the feed listens: a subscriber added while it reconnects would miss changes.
                    isSubscribed = await relay.subscribe(
                        id,
                        destination: destination,
                        source: source,
                        outbox: outbox,
                        timeout: feedWait
                    )
                } else {
                    hub.subscribe(id, destination: destination, source: source, outbox: outbox)
                }
                let actions = session.subscription(requestID: requestID, isSubscribed: isSubscribed)
                await execute(actions, session: &session, id: id, outbox: outbox)
            case .publish(let change):
                // With a feed, the change comes back through it (once, in commit order).
                if relay == nil { hub.publish(change) }
            case .close:
                outbox.finish()
            }
        }
    }

    private func perform(
        _ operation: NotesServerSession.Operation
    ) async -> Result<NotesServerSession.StoreOutcome, NotesError> {
        do {
            switch operation {
            case .list:
                return .success(.notes(try await dao.findAll()))
            case .add(let text):
                let note = Note(content: text)
                try await dao.create(note)
                return .success(.changed(.added(note)))
            case .edit(let id, let text):
                guard var note = try await dao.findById(Note(id: id, content: "")) else {
                    return .failure(NotesError(code: .notFound, message: "no note \(id.uuidString)"))
                }
                note.content = text
                try await dao.modify(note)
                return .success(.changed(.edited(note)))
            case .remove(let id):
                guard try await dao.remove(Note(id: id, content: "")) else {
                    return .failure(NotesError(code: .notFound, message: "no note \(id.uuidString)"))
                }
                return .success(.changed(.removed(id)))
            }
        } catch {
            // The store's error names files and databases: it stays in the server's log.
            logger.debug("notes store failed: \(error)")
            return .failure(NotesError(code: .storeFailure, message: "the store failed; nothing changed"))
        }
    }
}
