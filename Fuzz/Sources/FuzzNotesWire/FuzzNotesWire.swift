import FuzzSupport
import NIOCore
@_spi(Fuzzing) import TetherNotes
import TetherStore

/// Input: two bytes choosing the server's payload limit, then one frame's payload of the notes protocol.
@main
enum FuzzNotesWire {
    static func main() {
        runFuzzer(fuzzNotesWire)
    }
}

func fuzzNotesWire(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let limitBits = input.uint16()
    // Half the inputs on the protocol's limit, half on a low one, where pages and refusals are small enough to reach.
    let limit =
        limitBits & 0x8000 == 0
        ? NotesWireFormat.maxPayloadLength : NotesServer.minPayloadLength + Int(limitBits & 0x3FF)
    let bytes = input.rest
    let payload = ByteBuffer(bytes: bytes)

    // Decoding: the same twice; a typed error of the decoder's three codes, or a message that encodes back to the
    // very bytes.
    let first = decoded(payload)
    let second = decoded(payload)
    switch (first, second) {
    case (.success(let a), .success(let b)):
        require(a.requestID == b.requestID && a.message == b.message, "decoding twice differs")
        do {
            let encoded = try NotesWireFormat.encode(a.message, requestID: a.requestID)
            require(Array(encoded.readableBytesView) == bytes, "\(a.message) encodes to other bytes")
        } catch {
            require(false, "a decoded \(a.message) does not encode: \(error)")
        }
    case (.failure(let a), .failure(let b)):
        require(a == b, "decoding twice fails differently")
        require([.malformedMessage, .unknownMessage, .tooLarge].contains(a.code), "decoding failed with \(a.code)")
    default:
        require(false, "decoding twice succeeds once")
    }

    // The server's session: open, and every reply within the limit and a message of the protocol; a payload that
    // does not decode is answered once, with its request id when it has one.
    let (replies, asksForMore, isOpen) = NotesParsing.serverSession(receiving: payload, maxPayloadLength: limit)
    require(isOpen, "a payload closed the session")
    for reply in replies {
        require(reply.readableBytes <= limit, "a reply of \(reply.readableBytes) bytes over the limit \(limit)")
        require((try? NotesWireFormat.decode(reply)) != nil, "a reply does not decode")
    }
    switch first {
    case .failure(let error):
        require(replies.count == 1 && !asksForMore, "a payload that does not decode got \(replies.count) replies")
        let expectedID: UInt32 =
            bytes.count >= 5
            ? UInt32(bytes[1]) | UInt32(bytes[2]) << 8 | UInt32(bytes[3]) << 16 | UInt32(bytes[4]) << 24 : 0
        if let (id, message) = try? NotesWireFormat.decode(replies[0]), case .failed(let reply) = message {
            require(id == expectedID, "a decode error answered request \(id), not \(expectedID)")
            require(reply.code == error.code, "a decode error answered with another code")
        } else {
            require(false, "a decode error was not answered with an error")
        }
    case .success(let (requestID, message)):
        switch message {
        case .list, .remove, .subscribe:
            require(replies.isEmpty && asksForMore, "\(message) was not handed on")
        case .add(let text), .edit(_, let text):
            let fits = text.utf8.count <= NotesWireFormat.maxTextLength(forPayloadLength: limit)
            require(fits == (replies.isEmpty && asksForMore), "a text of \(text.utf8.count) bytes, limit \(limit)")
        case .notes(let notes, _):
            require(replies.count == 1 && !asksForMore, "a reply kind sent as a request was not refused")
            // The same notes listed by a server: its pages hold them all, in order, within the limit, or the list
            // fails naming a note too long for any page.
            let pages = NotesParsing.serverList(notes, requestID: requestID, maxPayloadLength: limit)
            var listed: [Note] = []
            var failed = false
            for page in pages {
                require(page.readableBytes <= limit, "a page of \(page.readableBytes) bytes over the limit \(limit)")
                switch try? NotesWireFormat.decode(page) {
                case .some((let id, .notes(let part, _))) where id == requestID: listed += part
                case .some((let id, .failed(let error))) where id == requestID && error.code == .tooLarge: failed = true
                default: require(false, "a list reply is neither a page nor tooLarge")
                }
            }
            let longest = notes.map(\.content.utf8.count).max() ?? 0
            let fits = longest <= NotesWireFormat.maxTextLength(forPayloadLength: limit)
            require(fits ? listed == notes && !failed : failed && pages.count == 1, "a list of \(notes.count) notes")
        default:
            require(replies.count == 1 && !asksForMore, "a reply kind sent as a request was not refused")
        }
    }
    return 0
}

/// The outcome of decoding `payload`.
func decoded(_ payload: ByteBuffer) -> Result<(requestID: UInt32, message: NotesMessage), NotesError> {
    do {
        return .success(try NotesWireFormat.decode(payload))
    } catch {
        return .failure(error)
    }
}
