public import Foundation
import NIOCore
import TetherConcurrency
import TetherCore
public import TetherSockets
public import TetherStore

/// A client of a notes server (``NotesServer``, `tether serve --notes`): what the local stores do, over the network,
/// plus a stream of every change made by anyone.
///
/// ```swift
/// let notes = try await RemoteNoteStore.connect(host: "127.0.0.1", port: port)
/// let note = try await notes.add("Buy milk")
/// for try await change in try await notes.changes() { print(change) }
/// ```
///
/// Requests may be made from many tasks at once; each is answered in turn. When the connection ends, every waiting
/// request and the change stream fail with ``NotesError/Code/connectionFailed``.
public final class RemoteNoteStore: Sendable {
    private struct State {
        var table = RemoteRequestTable()
        var waiters: [UInt32: CheckedContinuation<NotesMessage, any Error>] = [:]
        /// Replies that arrived before their caller started waiting (it was still returning from its write).
        var early: [UInt32: Result<NotesMessage, NotesError>] = [:]
        var changes: [AsyncThrowingStream<NoteChange, any Error>.Continuation] = []
        var ended: NotesError?
        var isClosing = false
    }

    private let connection: TCPConnection
    private let codec = STXFrameCodec()
    private let state = LockedBox(State())
    private let address: (destination: UInt16, source: UInt16)
    private let reader: LockedBox<Task<Void, Never>?> = LockedBox(nil)

    private init(connection: TCPConnection, destination: UInt16, source: UInt16) {
        self.connection = connection
        self.address = (destination, source)
    }

    /// Connects to a notes server.
    /// - Parameters:
    ///   - host: the server's name or address.
    ///   - port: the server's port.
    ///   - tls: when set, the connection is secured first (see `TLSSettings`).
    ///   - timeout: the longest the connection (and a TLS handshake) may take.
    ///   - destination: the `dest` field of the frames sent (the server answers to the `src`).
    ///   - source: the `src` field of the frames sent.
    ///   - credentials: the user and their password or token, sent first; nil for an anonymous server (loopback).
    /// - Throws: ``NotesError`` `.connectionFailed` with the socket's error; `.authenticationFailed` when the server
    ///   refuses the credentials (and says nothing more), `.limitExceeded` or `.timedOut` when it refuses the
    ///   connection.
    public static func connect(
        host: String,
        port: Int,
        tls: TLSSettings? = nil,
        credentials: NotesCredentials? = nil,
        timeout: Duration = .seconds(10),
        destination: UInt16 = 1,
        source: UInt16 = 2
    ) async throws -> RemoteNoteStore {
        let connection: TCPConnection
        do {
            connection = try await TCPConnection.connect(host: host, port: port, timeout: timeout, tls: tls)
        } catch {
            throw NotesError(code: .connectionFailed, message: "\(host):\(port): \(error)")
        }
        let store = RemoteNoteStore(connection: connection, destination: destination, source: source)
        store.reader.withLock { $0 = Task { await store.readReplies() } }
        guard let credentials else { return store }
        do {
            guard case .authenticated = try await store.request(.authenticate(credentials)) else {
                throw store.unexpected()
            }
        } catch {
            await store.close()
            throw error
        }
        return store
    }

    /// Every note, oldest first.
    public func list() async throws -> [Note] {
        guard case .notes(let notes, _) = try await request(.list) else { throw unexpected() }
        return notes
    }

    /// Adds a note; returns it with the id and date the server gave it.
    public func add(_ text: String) async throws -> Note {
        guard case .added(let note) = try await request(.add(text)) else { throw unexpected() }
        return note
    }

    /// Replaces the text of note `id`; returns the note.
    /// - Throws: ``NotesError`` `.notFound` when the server has no such note.
    public func edit(_ id: UUID, text: String) async throws -> Note {
        guard case .edited(let note) = try await request(.edit(id, text)) else { throw unexpected() }
        return note
    }

    /// Removes note `id`.
    /// - Throws: ``NotesError`` `.notFound` when the server has no such note.
    public func remove(_ id: UUID) async throws {
        guard case .removed = try await request(.remove(id)) else { throw unexpected() }
    }

    /// The most changes a stream of ``changes()`` keeps unread.
    public static let maxUnreadChanges = 10_000

    /// Subscribes, and returns every change made after this call returns, by any client, until the connection
    /// ends (then the stream fails with ``NotesError/Code/connectionFailed``) or ``close()``.
    ///
    /// A stream whose reader falls ``maxUnreadChanges`` changes behind fails with ``NotesError/Code/tooLarge``
    /// rather than grow without bound: watch again and list to catch up.
    public func changes() async throws -> AsyncThrowingStream<NoteChange, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: NoteChange.self,
            bufferingPolicy: .bufferingOldest(Self.maxUnreadChanges)
        )
        let ended = state.withLock { s -> NotesError? in
            if s.ended == nil { s.changes.append(continuation) }
            return s.ended
        }
        if let ended { throw ended }
        guard case .subscribed = try await request(.subscribe) else { throw unexpected() }
        return stream
    }

    /// Closes the connection: waiting requests fail with ``NotesError/Code/connectionFailed``, change streams
    /// finish.
    public func close() async {
        state.withLock { $0.isClosing = true }
        try? await connection.close()
        await reader.withLock { $0 }?.value
    }

    /// Sends `message` from the calling task (its bytes join the connection's write window; no task is made for
    /// them) and waits for its reply.
    private func request(_ message: NotesMessage) async throws -> NotesMessage {
        var payload = try NotesWireFormat.encode(message, requestID: 0)
        let id = try state.withLock { s -> UInt32 in
            if let ended = s.ended { throw ended }
            return s.table.begin()
        }
        payload.setInteger(id, at: payload.readerIndex + 1, endianness: .little)
        let frame = STXFrame(destination: address.destination, source: address.source, payload: payload)
        do {
            try await connection.write(try codec.wireBytes(of: frame), timeout: .seconds(30))
        } catch is CancellationError {
            // The bytes still go out, in order, and the reply will come: wait for it as if the write had returned.
        } catch {
            state.withLock { s in
                s.table.abandon(id)
                s.early[id] = nil
            }
            throw NotesError(code: .connectionFailed, message: "\(error)")
        }
        return try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { s -> Result<NotesMessage, NotesError>? in
                if let early = s.early.removeValue(forKey: id) { return early }
                if let ended = s.ended { return .failure(ended) }
                s.waiters[id] = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready.mapError { $0 as any Error }) }
        }
    }

    private func readReplies() async {
        var failure = NotesError(code: .connectionFailed, message: "the server closed the connection")
        do {
            for try await frame in connection.frames(codec) {
                let (requestID, message) = try NotesWireFormat.decode(frame.payload)
                // The server ends the connection for a limit or a deadline: waiting requests get its reason.
                if requestID == 0, case .failed(let error) = message, Self.endsConnection.contains(error.code) {
                    failure = error
                    break
                }
                typealias Waiter = CheckedContinuation<NotesMessage, any Error>
                let (completion, waiter) = state.withLock { s -> (RemoteRequestTable.Completion, Waiter?) in
                    let completion = s.table.received(requestID: requestID, message)
                    guard case .reply(let id, let result) = completion else { return (completion, nil) }
                    guard let waiter = s.waiters.removeValue(forKey: id) else {
                        s.early[id] = result
                        return (completion, nil)
                    }
                    return (completion, waiter)
                }
                switch completion {
                case .reply(_, let result):
                    waiter?.resume(with: result.mapError { $0 as any Error })
                case .change(let change):
                    for continuation in state.withLock({ $0.changes }) {
                        guard case .dropped = continuation.yield(change) else { continue }
                        // The reader fell too far behind: its stream ends (it may have missed changes).
                        continuation.finish(
                            throwing: NotesError(
                                code: .tooLarge,
                                message: "more than \(Self.maxUnreadChanges) changes waited unread"
                            )
                        )
                    }
                case .none:
                    break
                case .violation(let what):
                    throw NotesError(code: .malformedMessage, message: what)
                }
            }
        } catch let error as NotesError {
            failure = NotesError(code: .connectionFailed, message: "\(error)")
        } catch {
            failure = NotesError(code: .connectionFailed, message: "\(error)")
        }
        try? await connection.close()
        let (waiters, changes, isClosing) = state.withLock { s in
            s.ended = failure
            _ = s.table.ended()
            defer {
                s.waiters = [:]
                s.changes = []
            }
            return (Array(s.waiters.values), s.changes, s.isClosing)
        }
        for waiter in waiters { waiter.resume(throwing: failure) }
        for continuation in changes { continuation.finish(throwing: isClosing ? nil : failure) }
    }

    /// The codes of an error the server sends with request id 0 before it closes the connection.
    static let endsConnection: Set<NotesError.Code> = [.limitExceeded, .timedOut, .notAuthenticated]

    private func unexpected() -> NotesError {
        NotesError(code: .malformedMessage, message: "a reply of the wrong kind")
    }
}
