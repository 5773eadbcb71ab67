public import NIOCore
public import TetherStore

import struct Foundation.Date
import struct Foundation.UUID

/// The bytes of the notes protocol inside an STX frame's payload (see <doc:NotesProtocol>): encoding and decoding,
/// no I/O.
///
/// Every payload is `kind (1) | request id (4) | body`, numbers little-endian as the seed's frame; a note is
/// `id (16) | date (8: the IEEE 754 bits of seconds since 2001-01-01 UTC) | text length (2) | text (UTF-8)`.
public enum NotesWireFormat {
    /// The largest payload of an STX frame (its length field has 16 bits).
    public static let maxPayloadLength = 65_535
    /// The longest text of a note, in UTF-8 bytes: the most that fits in any message with its note, a page of one
    /// note included (``maxTextLength(forPayloadLength:)`` of ``maxPayloadLength``).
    public static let maxTextLength = 65_535 - noteOverhead

    /// The bytes of a list page's header and of one note around its text: the most a note's text must leave room
    /// for in a payload.
    static let noteOverhead = 5 + 1 + 2 + 16 + 8 + 2

    /// The longest text of a note that fits in every message with its note, a page of one note included, when
    /// payloads hold at most `payloadLength` bytes (a server with a lower limit than the protocol's takes no longer
    /// texts).
    /// - Parameter payloadLength: the largest payload.
    /// - Returns: `payloadLength` less 34 bytes (the page header and the note's id, date and length), or 0.
    public static func maxTextLength(forPayloadLength payloadLength: Int) -> Int {
        max(0, payloadLength - noteOverhead)
    }

    /// The kind byte of each message.
    enum Kind: UInt8 {
        case list = 0x01
        case add = 0x02
        case edit = 0x03
        case remove = 0x04
        case subscribe = 0x05
        case authenticate = 0x06
        case notes = 0x81
        case added = 0x82
        case edited = 0x83
        case removed = 0x84
        case subscribed = 0x85
        case authenticated = 0x86
        case failed = 0x8F
        case changedAdded = 0x90
        case changedEdited = 0x91
        case changedRemoved = 0x92
    }

    /// The payload of `message` with `requestID`.
    /// - Throws: ``NotesError`` `.tooLarge` when a text is over ``maxTextLength`` bytes or a page of notes over
    ///   ``maxPayloadLength`` (see ``pages(of:maxPayloadLength:)``); nothing is written then.
    public static func encode(_ message: NotesMessage, requestID: UInt32) throws(NotesError) -> ByteBuffer {
        // Sized once: a buffer grown write by write would be reallocated four or five times per message.
        var buffer = ByteBufferAllocator().buffer(capacity: min(encodedSize(of: message), maxPayloadLength + 1))
        func header(_ kind: Kind) {
            buffer.writeInteger(kind.rawValue)
            buffer.writeInteger(requestID, endianness: .little)
        }
        switch message {
        case .list: header(.list)
        case .add(let text):
            try checkText(text)
            header(.add)
            buffer.writeString(text)
        case .edit(let id, let text):
            try checkText(text)
            header(.edit)
            buffer.writeUUID(id)
            buffer.writeString(text)
        case .remove(let id):
            header(.remove)
            buffer.writeUUID(id)
        case .subscribe: header(.subscribe)
        case .authenticate(let credentials):
            header(.authenticate)
            try buffer.writeCredentials(credentials)
        case .authenticated: header(.authenticated)
        case .notes(let notes, let isLast):
            header(.notes)
            buffer.writeInteger(isLast ? 1 : 0, as: UInt8.self)
            guard notes.count <= Int(UInt16.max) else { throw tooLarge("a page of \(notes.count) notes") }
            buffer.writeInteger(UInt16(notes.count), endianness: .little)
            for note in notes { try buffer.writeNote(note) }
        case .added(let note):
            header(.added)
            try buffer.writeNote(note)
        case .edited(let note):
            header(.edited)
            try buffer.writeNote(note)
        case .removed(let id):
            header(.removed)
            buffer.writeUUID(id)
        case .subscribed: header(.subscribed)
        case .failed(let error):
            header(.failed)
            buffer.writeInteger(error.code.rawValue, endianness: .little)
            buffer.writeString(prefix(of: error.message, maxBytes: 1_024))
        case .changed(.added(let note)):
            header(.changedAdded)
            try buffer.writeNote(note)
        case .changed(.edited(let note)):
            header(.changedEdited)
            try buffer.writeNote(note)
        case .changed(.removed(let id)):
            header(.changedRemoved)
            buffer.writeUUID(id)
        }
        guard buffer.readableBytes <= maxPayloadLength else {
            throw tooLarge("a payload of \(buffer.readableBytes) bytes")
        }
        return buffer
    }

    /// The bytes `message` takes, or about that for a message carrying an error or credentials.
    static func encodedSize(of message: NotesMessage) -> Int {
        let header = 5
        let noteFields = 16 + 8 + 2
        switch message {
        case .list, .subscribe, .authenticated, .subscribed: return header
        case .add(let text): return header + text.utf8.count
        case .edit(_, let text): return header + 16 + text.utf8.count
        case .remove, .removed, .changed(.removed): return header + 16
        case .authenticate: return 128
        case .notes(let notes, _): return notes.reduce(header + 3) { $0 + noteFields + $1.content.utf8.count }
        case .added(let note), .edited(let note), .changed(.added(let note)), .changed(.edited(let note)):
            return header + noteFields + note.content.utf8.count
        case .failed(let error): return header + 2 + min(error.message.utf8.count, 1_024)
        }
    }

    /// The request id and message of a frame's payload.
    /// - Throws: ``NotesError`` `.unknownMessage` for a kind byte the protocol does not have (with the request id,
    ///   when the payload has one, in ``NotesError/message``), `.tooLarge` for an add or an edit whose text is over
    ///   ``maxTextLength`` bytes, `.malformedMessage` for anything else that does not parse, including bytes left
    ///   over after the message.
    public static func decode(_ payload: ByteBuffer) throws(NotesError) -> (requestID: UInt32, message: NotesMessage) {
        var buffer = payload
        guard let byte = buffer.readInteger(as: UInt8.self),
            let requestID = buffer.readInteger(endianness: .little, as: UInt32.self)
        else { throw malformed("a payload of \(payload.readableBytes) bytes has no header") }
        guard let kind = Kind(rawValue: byte) else {
            throw NotesError(code: .unknownMessage, message: "unknown message kind \(byte) (request \(requestID))")
        }
        let message: NotesMessage
        switch kind {
        case .list: message = .list
        case .add: message = .add(try buffer.readRestAsNoteText())
        case .edit: message = .edit(try buffer.readUUIDField(), try buffer.readRestAsNoteText())
        case .remove: message = .remove(try buffer.readUUIDField())
        case .subscribe: message = .subscribe
        case .authenticate: message = .authenticate(try buffer.readCredentials())
        case .authenticated: message = .authenticated
        case .notes:
            guard let flags = buffer.readInteger(as: UInt8.self), flags <= 1,
                let count = buffer.readInteger(endianness: .little, as: UInt16.self)
            else { throw malformed("a notes page without its flags and count") }
            var notes: [Note] = []
            for _ in 0..<count { notes.append(try buffer.readNote()) }
            message = .notes(notes, isLast: flags == 1)
        case .added: message = .added(try buffer.readNote())
        case .edited: message = .edited(try buffer.readNote())
        case .removed: message = .removed(try buffer.readUUIDField())
        case .subscribed: message = .subscribed
        case .failed:
            guard let code = buffer.readInteger(endianness: .little, as: UInt16.self) else {
                throw malformed("an error reply without its code")
            }
            message = .failed(NotesError(code: .init(rawValue: code), message: try buffer.readRestAsText()))
        case .changedAdded: message = .changed(.added(try buffer.readNote()))
        case .changedEdited: message = .changed(.edited(try buffer.readNote()))
        case .changedRemoved: message = .changed(.removed(try buffer.readUUIDField()))
        }
        guard buffer.readableBytes == 0 else {
            throw malformed("\(buffer.readableBytes) bytes after a \(kind) message")
        }
        return (requestID, message)
    }

    /// The request id of a payload, when it is long enough to have one (whether or not the rest parses).
    static func requestID(of payload: ByteBuffer) -> UInt32? {
        payload.getInteger(at: payload.readerIndex + 1, endianness: .little, as: UInt32.self)
    }

    /// `notes` cut into pages that each fit in a payload of `maxPayloadLength` bytes, in order; one empty page for
    /// no notes. A note too long to fit in any page (a text over ``maxTextLength(forPayloadLength:)`` bytes) gets a
    /// page of its own, which ``encode(_:requestID:)`` or the frame's limit then refuses.
    /// - Parameters:
    ///   - notes: the notes of a list, in order.
    ///   - maxPayloadLength: the largest payload of a frame (a server's limit may be lower than the protocol's).
    public static func pages(of notes: [Note], maxPayloadLength: Int = NotesWireFormat.maxPayloadLength) -> [[Note]] {
        var pages: [[Note]] = []
        var page: [Note] = []
        var size = 5 + 3
        for note in notes {
            let noteSize = 16 + 8 + 2 + note.content.utf8.count
            if !page.isEmpty && (size + noteSize > maxPayloadLength || page.count == Int(UInt16.max)) {
                pages.append(page)
                page = []
                size = 5 + 3
            }
            page.append(note)
            size += noteSize
        }
        pages.append(page)
        return pages
    }

    /// The longest start of `text` of at most `maxBytes` UTF-8 bytes that ends on a character.
    static func prefix(of text: String, maxBytes: Int) -> String {
        guard text.utf8.count > maxBytes else { return text }
        var end = text.startIndex
        var length = 0
        for character in text {
            let size = character.utf8.count
            guard length + size <= maxBytes else { break }
            length += size
            end = text.index(after: end)
        }
        return String(text[..<end])
    }

    static func checkText(_ text: String) throws(NotesError) {
        let length = text.utf8.count
        guard length <= maxTextLength else {
            throw tooLarge("a text of \(length) bytes; at most \(maxTextLength)")
        }
    }

    static func tooLarge(_ what: String) -> NotesError {
        NotesError(code: .tooLarge, message: "\(what) does not fit in a frame")
    }

    static func malformed(_ what: String) -> NotesError {
        NotesError(code: .malformedMessage, message: what)
    }
}

/// A UUID's 16 bytes, as `UUID(uuid:)` takes them.
private typealias UUIDBytes = (
    UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
)

extension ByteBuffer {
    fileprivate mutating func writeUUID(_ id: UUID) {
        withUnsafeBytes(of: id.uuid) { _ = writeBytes($0) }
    }

    fileprivate mutating func writeNote(_ note: Note) throws(NotesError) {
        try NotesWireFormat.checkText(note.content)
        writeUUID(note.id)
        writeInteger(note.date.timeIntervalSinceReferenceDate.bitPattern, endianness: .little)
        writeInteger(UInt16(note.content.utf8.count), endianness: .little)
        writeString(note.content)
    }

    fileprivate mutating func readUUIDField() throws(NotesError) -> UUID {
        guard readableBytes >= 16 else { throw NotesWireFormat.malformed("a note id cut short") }
        // Loaded in place: `readBytes(length:)` would make an array per id.
        let id = withUnsafeReadableBytes { UUID(uuid: $0.loadUnaligned(as: UUIDBytes.self)) }
        moveReaderIndex(forwardBy: 16)
        return id
    }

    /// The rest of a request as a note's text: refused over ``NotesWireFormat/maxTextLength`` bytes, since no reply
    /// could carry the note.
    fileprivate mutating func readRestAsNoteText() throws(NotesError) -> String {
        guard readableBytes <= NotesWireFormat.maxTextLength else {
            throw NotesWireFormat.tooLarge("a text of \(readableBytes) bytes; at most \(NotesWireFormat.maxTextLength)")
        }
        return try readRestAsText()
    }

    fileprivate mutating func readRestAsText() throws(NotesError) -> String {
        try readText(length: readableBytes)
    }

    fileprivate mutating func readText(length: Int) throws(NotesError) -> String {
        let text = readableBytesView.prefix(length).withContiguousStorageIfAvailable {
            String(validating: $0, as: UTF8.self)
        }
        guard let text = text ?? nil else { throw NotesWireFormat.malformed("text that is not UTF-8") }
        moveReaderIndex(forwardBy: length)
        return text
    }

    fileprivate mutating func readNote() throws(NotesError) -> Note {
        let id = try readUUIDField()
        guard let bits = readInteger(endianness: .little, as: UInt64.self),
            let length = readInteger(endianness: .little, as: UInt16.self)
        else { throw NotesWireFormat.malformed("a note cut short") }
        let seconds = Double(bitPattern: bits)
        guard seconds.isFinite else { throw NotesWireFormat.malformed("a note's date is not a number") }
        guard readableBytes >= Int(length) else { throw NotesWireFormat.malformed("a note's text cut short") }
        let text = try readText(length: Int(length))
        return Note(id: id, date: Date(timeIntervalSinceReferenceDate: seconds), content: text)
    }
}
