import NIOCore
import Testing

@testable import TetherSockets

private typealias Machine = TCPStateMachine<String, String>

/// `disconnectAfterWriting` drops the bytes buffered and every byte that arrives after it, where no read can take
/// them any more, so that reading goes on; the RunLoop era (whose error close reports unread bytes), a pending TLS
/// upgrade (which needs the peer's bytes) and `disconnectAfterReadingAndWriting` (whose reads go on) keep them.
struct TCPStateMachineCloseAfterWritingTests {
    enum Case: String, CaseIterable, CustomStringConvertible {
        case delegateFace, runLoopEra, tlsPending, readsToo
        var description: String { rawValue }
    }

    /// An open connection with bytes buffered and a write queued, in the case's circumstances.
    private func make(_ situation: Case) -> Machine {
        var policy = EnginePolicy.delegateFace
        if situation == .runLoopEra { policy.keepsInputAfterWritingClose = true }
        var m = Machine(policy: policy)
        _ = m.activate()
        m.reads.received(ByteBuffer(string: "before"))
        _ = m.writes.enqueue(
            id: m.nextID(),
            bytes: ByteBuffer(string: "x"),
            timeout: nil,
            waiter: .delegate(tag: 1),
            canSend: true
        )
        if situation == .tlsPending {
            let refusal = m.requestTLS()
            #expect(refusal == nil)
        }
        if situation == .readsToo { _ = m.closeAfter(.reads) }
        return m
    }

    @Test(arguments: Case.allCases)
    func whatArrivesAfterTheRequestIsDroppedOnlyWhereNoReadCanTakeIt(_ situation: Case) {
        var m = make(situation)
        let closesNow = m.closeAfterWriting()
        m.reads.received(ByteBuffer(string: "after"))
        let drops = situation == .delegateFace
        #expect(!closesNow)  // the write is still queued
        #expect(m.reads.discardsInput == drops)
        #expect(m.reads.bufferedBytes == (drops ? 0 : "beforeafter".utf8.count))
        #expect(m.closesAfter.contains(.writes))
    }

    @Test func theRequestClosesAtOnceWhenNoWriteIsQueuedAndStillDropsTheInput() {
        var m = Machine(policy: .delegateFace)
        _ = m.activate()
        m.reads.received(ByteBuffer(string: "unread"))
        let closesNow = m.closeAfterWriting()
        #expect(closesNow)
        #expect(m.reads.bufferedBytes == 0)
    }

    @Test func theWritesDoneAfterTheRequestMakeTheCloseDue() {
        var m = make(.delegateFace)
        _ = m.closeAfterWriting()
        #expect(!m.isDrainedForClose)
        _ = m.writes.removeAll()
        #expect(m.isDrainedForClose)
    }
}
