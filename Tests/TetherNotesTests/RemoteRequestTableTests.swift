import Foundation
import Testing
import TetherStore

@testable import TetherNotes

@Suite("RemoteRequestTable: a client's requests and the replies that complete them, without I/O")
struct RemoteRequestTableTests {
    @Test("ids start at 1, are never 0, and each reply completes its own request")
    func repliesCompleteTheirRequests() {
        var table = RemoteRequestTable()
        let first = table.begin()
        let second = table.begin()
        #expect(first == 1 && second == 2)
        #expect(table.received(requestID: second, .subscribed) == .reply(id: second, .success(.subscribed)))
        let missing = NotesError(code: .notFound, message: "no note")
        #expect(table.received(requestID: first, .failed(missing)) == .reply(id: first, .failure(missing)))
        #expect(table.count == 0)
    }

    @Test("a list's pages are gathered until the last")
    func pagesGather() {
        var table = RemoteRequestTable()
        let id = table.begin()
        let (a, b, c) = (Note(content: "a"), Note(content: "b"), Note(content: "c"))
        #expect(table.received(requestID: id, .notes([a, b], isLast: false)) == .none)
        #expect(
            table.received(requestID: id, .notes([c], isLast: true))
                == .reply(id: id, .success(.notes([a, b, c], isLast: true)))
        )
    }

    @Test("a list whose pages gather more than the byte limit is a violation, not a growing buffer")
    func aListOverTheByteLimitIsAViolation() {
        var table = RemoteRequestTable(maxListBytes: 100)
        let id = table.begin()
        let note = Note(content: String(repeating: "x", count: 40))
        #expect(table.received(requestID: id, .notes([note], isLast: false)) == .none)
        if case .violation = table.received(requestID: id, .notes([note], isLast: false)) {
        } else {
            Issue.record("a list over the limit was kept")
        }
    }

    @Test("pushes with id 0 are changes; anything unasked for is a violation")
    func pushesAndViolations() {
        var table = RemoteRequestTable()
        let note = Note(content: "x")
        #expect(table.received(requestID: 0, .changed(.added(note))) == .change(.added(note)))
        if case .violation = table.received(requestID: 5, .subscribed) {} else { Issue.record("an unasked reply") }
        if case .violation = table.received(requestID: 0, .list) {} else { Issue.record("an id-0 request") }
        let id = table.begin()
        if case .violation = table.received(requestID: id, .add("x")) {} else { Issue.record("a request as a reply") }
    }

    @Test("when the connection ends, every waiting request is returned once")
    func endFailsWaiting() {
        var table = RemoteRequestTable()
        let ids = [table.begin(), table.begin(), table.begin()]
        table.abandon(ids[1])
        #expect(Set(table.ended()) == [ids[0], ids[2]])
        #expect(table.ended().isEmpty)
    }
}
