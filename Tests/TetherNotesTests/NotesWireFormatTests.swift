import Foundation
import NIOCore
import Testing
import TetherNotes
import TetherStore

@Suite("NotesWireFormat: every message's bytes, and a typed error for every payload that is not one")
struct NotesWireFormatTests {
    static let id = UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!
    static let note = Note(id: id, date: Date(timeIntervalSinceReferenceDate: 1.5), content: "héllo")

    static let messages: [NotesMessage] = [
        .list, .add("Buy milk"), .add(""), .edit(id, "new text"), .remove(id), .subscribe,
        .notes([], isLast: true), .notes([note, Note(content: "second")], isLast: false), .added(note), .edited(note),
        .removed(id), .subscribed, .failed(NotesError(code: .notFound, message: "no note")),
        .failed(NotesError(code: NotesError.Code(rawValue: 999), message: "")), .changed(.added(note)),
        .changed(.edited(note)), .changed(.removed(id)),
    ]

    @Test("every message decodes to itself with its request id", arguments: messages)
    func roundTrip(message: NotesMessage) throws {
        let payload = try NotesWireFormat.encode(message, requestID: 0xDEAD_BEEF)
        let (requestID, decoded) = try NotesWireFormat.decode(payload)
        #expect(requestID == 0xDEAD_BEEF)
        #expect(decoded == message)
    }

    @Test("the bytes of the protocol article's examples")
    func documentedBytes() throws {
        // list, request 7
        #expect(try NotesWireFormat.encode(.list, requestID: 7).readableBytesView.elementsEqual([1, 7, 0, 0, 0]))
        // add "hi", request 1
        #expect(
            try NotesWireFormat.encode(.add("hi"), requestID: 1).readableBytesView.elementsEqual(
                [0x02, 1, 0, 0, 0, 0x68, 0x69]
            )
        )
        // removed, request 2: kind 0x84, then the id's 16 bytes in order
        let removed = try NotesWireFormat.encode(.removed(Self.id), requestID: 2)
        #expect(
            Array(removed.readableBytesView) == [0x84, 2, 0, 0, 0] + [
                0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF,
            ]
        )
        // failed notFound, request 3: code 3 little-endian, then the message
        #expect(
            try NotesWireFormat.encode(.failed(NotesError(code: .notFound, message: "x")), requestID: 3)
                .readableBytesView.elementsEqual([0x8F, 3, 0, 0, 0, 3, 0, 0x78])
        )
    }

    static let malformed: [(String, [UInt8], NotesError.Code)] = [
        ("empty", [], .malformedMessage),
        ("a header cut short", [0x01, 0, 0], .malformedMessage),
        ("an unknown kind", [0x42, 9, 0, 0, 0], .unknownMessage),
        ("a remove without its id", [0x04, 1, 0, 0, 0, 1, 2, 3], .malformedMessage),
        ("bytes after a list", [0x01, 1, 0, 0, 0, 0xFF], .malformedMessage),
        ("text that is not UTF-8", [0x02, 1, 0, 0, 0, 0xC3, 0x28], .malformedMessage),
        ("a page with a flag of 2", [0x81, 1, 0, 0, 0, 2, 0, 0], .malformedMessage),
        ("a page announcing a note it lacks", [0x81, 1, 0, 0, 0, 1, 1, 0], .malformedMessage),
        ("an error reply without its code", [0x8F, 1, 0, 0, 0, 3], .malformedMessage),
    ]

    @Test("a payload that is not a message is a typed error", arguments: malformed)
    func malformedPayloads(name: String, bytes: [UInt8], code: NotesError.Code) throws {
        let error = try #require(throws: NotesError.self) { try NotesWireFormat.decode(ByteBuffer(bytes: bytes)) }
        #expect(error.code == code, "\(name)")
    }

    @Test("a note whose text is cut short, or whose date is not a number, is malformed")
    func brokenNotes() throws {
        var full = try NotesWireFormat.encode(.added(Self.note), requestID: 1)
        let cut = full.getSlice(at: full.readerIndex, length: full.readableBytes - 1)!
        #expect(throws: NotesError(code: .malformedMessage, message: "a note's text cut short")) {
            try NotesWireFormat.decode(cut)
        }
        full.setInteger(Double.nan.bitPattern, at: full.readerIndex + 5 + 16, endianness: .little)
        let error = try #require(throws: NotesError.self) { try NotesWireFormat.decode(full) }
        #expect(error.code == .malformedMessage)
    }

    @Test("a text over the limit is refused before anything is written; the longest one fits in a frame")
    func textLimit() throws {
        let longest = String(repeating: "a", count: NotesWireFormat.maxTextLength)
        let payload = try NotesWireFormat.encode(.changed(.edited(Note(content: longest))), requestID: 1)
        #expect(payload.readableBytes < NotesWireFormat.maxPayloadLength)
        for message in [
            NotesMessage.add(longest + "a"), .edit(Self.id, longest + "a"), .added(Note(content: longest + "a")),
        ] {
            let error = try #require(throws: NotesError.self) { try NotesWireFormat.encode(message, requestID: 1) }
            #expect(error.code == .tooLarge)
        }
    }

    @Test("a page of one note of the longest text fills a payload exactly: every note that may be stored is listable")
    func aPageOfOneNoteOfTheLongestTextFitsInAPayload() throws {
        let longest = Note(content: String(repeating: "a", count: NotesWireFormat.maxTextLength))
        let payload = try NotesWireFormat.encode(.notes([longest], isLast: true), requestID: 1)
        #expect(payload.readableBytes == NotesWireFormat.maxPayloadLength)
        #expect(NotesWireFormat.maxTextLength(forPayloadLength: 1_024) == 1_024 - 34)
    }

    @Test("an add or an edit whose text is over the limit is refused tooLarge when read, before anything is stored")
    func anAddOrAnEditOverTheTextLimitIsRefusedWhenRead() throws {
        let text = [UInt8](repeating: 0x61, count: NotesWireFormat.maxTextLength + 1)
        let add = ByteBuffer(bytes: [0x02, 1, 0, 0, 0] + text)
        let edit = ByteBuffer(bytes: [0x03, 2, 0, 0, 0] + [UInt8](repeating: 7, count: 16) + text)
        for payload in [add, edit] {
            let error = try #require(throws: NotesError.self) { try NotesWireFormat.decode(payload) }
            #expect(error.code == .tooLarge)
        }
        let longest = ByteBuffer(bytes: [0x02, 1, 0, 0, 0] + text.dropLast())
        #expect(try NotesWireFormat.decode(longest).message == .add(String(repeating: "a", count: text.count - 1)))
    }

    @Test("pages for a lower payload limit: each page fits in it")
    func pagesForALowerPayloadLimitFitInIt() throws {
        let notes = (0..<20).map { Note(content: String(repeating: "x", count: 300 + $0)) }
        let pages = NotesWireFormat.pages(of: notes, maxPayloadLength: 1_024)
        #expect(pages.flatMap { $0 } == notes)
        for page in pages {
            #expect(try NotesWireFormat.encode(.notes(page, isLast: false), requestID: 1).readableBytes <= 1_024)
        }
    }

    @Test("pages: every note once, in order, each page fits in a frame; no notes is one empty page")
    func pages() throws {
        #expect(NotesWireFormat.pages(of: []) == [[]])
        let notes = (0..<40).map { Note(content: String(repeating: "x", count: 5_000 + $0)) }
        let pages = NotesWireFormat.pages(of: notes)
        #expect(pages.count > 1)
        #expect(pages.flatMap { $0 } == notes)
        for (index, page) in pages.enumerated() {
            let payload = try NotesWireFormat.encode(.notes(page, isLast: index == pages.count - 1), requestID: 1)
            #expect(payload.readableBytes <= NotesWireFormat.maxPayloadLength)
        }
    }
}
