import TetherStore

/// A client's requests in flight, as a state machine: requests out, replies in, completions out. No I/O:
/// ``RemoteNoteStore`` executes what it returns, and the tests drive it by hand.
struct RemoteRequestTable {
    /// What a reply completes.
    enum Completion: Equatable {
        /// Request `id` is done with this reply (a list: every page's notes, in order).
        case reply(id: UInt32, Result<NotesMessage, NotesError>)
        /// A change pushed to this subscriber.
        case change(NoteChange)
        /// Nothing to complete yet (a list page that is not the last).
        case none
        /// The server sent what no request asked for: the connection cannot be trusted.
        case violation(String)
    }

    /// The most bytes of notes (their wire size) one list may gather before the server is taken to misbehave.
    static let defaultMaxListBytes = 256 << 20

    private var nextID: UInt32 = 1
    private var pending: [UInt32: [Note]] = [:]
    private var listBytes: [UInt32: Int] = [:]
    private let maxListBytes: Int

    /// A table whose lists may gather at most `maxListBytes` bytes of notes.
    init(maxListBytes: Int = defaultMaxListBytes) {
        self.maxListBytes = maxListBytes
    }

    /// The number of requests waiting for their reply.
    var count: Int { pending.count }

    /// A new request: its id (never 0, which the server uses for pushes and unattributable errors).
    mutating func begin() -> UInt32 {
        let id = nextID
        nextID = nextID == UInt32.max ? 1 : nextID + 1
        pending[id] = []
        return id
    }

    /// Request `id` will not be answered (its send failed).
    mutating func abandon(_ id: UInt32) {
        pending[id] = nil
        listBytes[id] = nil
    }

    /// A message arrived with `requestID`.
    mutating func received(requestID: UInt32, _ message: NotesMessage) -> Completion {
        if requestID == 0 {
            switch message {
            case .changed(let change): return .change(change)
            case .failed(let error):
                return .violation("the server could not read a frame: \(error)")
            default: return .violation("an unsolicited \(message)")
            }
        }
        guard var notes = pending[requestID] else {
            return .violation("a reply to request \(requestID), which is not waiting")
        }
        switch message {
        case .notes(let page, let isLast):
            let bytes = listBytes[requestID, default: 0] + page.reduce(0) { $0 + 26 + $1.content.utf8.count }
            guard bytes <= maxListBytes else {
                return .violation("a list of more than \(maxListBytes) bytes of notes")
            }
            notes += page
            if !isLast {
                pending[requestID] = notes
                listBytes[requestID] = bytes
                return .none
            }
            abandon(requestID)
            return .reply(id: requestID, .success(.notes(notes, isLast: true)))
        case .failed(let error):
            abandon(requestID)
            return .reply(id: requestID, .failure(error))
        case .added, .edited, .removed, .subscribed, .authenticated:
            abandon(requestID)
            return .reply(id: requestID, .success(message))
        case .list, .add, .edit, .remove, .subscribe, .authenticate, .changed:
            return .violation("a request (\(message)) from the server")
        }
    }

    /// The connection ended: every request waiting fails.
    mutating func ended() -> [UInt32] {
        defer {
            pending = [:]
            listBytes = [:]
        }
        return Array(pending.keys)
    }
}
