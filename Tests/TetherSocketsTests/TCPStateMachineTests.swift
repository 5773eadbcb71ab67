import NIOCore
import Testing

@testable import TetherSockets

private typealias Machine = TCPStateMachine<String, String>

private func render(_ phase: Machine.Phase) -> String {
    switch phase {
    case .waitingForChannel: return "waiting"
    case .open(halfClosed: false): return "open"
    case .open(halfClosed: true): return "half-closed"
    case .closingGracefully: return "closing gracefully"
    case .peerGone: return "peer gone"
    case .closed(nil): return "closed"
    case .closed(let error?): return "closed: \(error.code)"
    }
}

private func render(_ end: Machine.ChannelEnd) -> String {
    switch end {
    case .close(let error): return "close: \(error.domain == .tls ? "tls" : "\(error.code)")"
    case .serveBufferedReads: return "serve buffered reads"
    case .serveBufferedReadsThenClose: return "serve buffered reads, then close"
    case .ignore: return "ignore"
    }
}

private func refusal(_ error: GCDAsyncSocketError?) -> String { error.map { "refused: \($0.code)" } ?? "accepted" }

/// The phases of the table, each made by the events that lead to it (delegate face unless named).
enum MachinePhase: String, CaseIterable, CustomStringConvertible {
    case waiting, open, halfClosed, closingGracefully, peerGone, closed, closedWithError
    var description: String { rawValue }

    fileprivate func make() -> Machine {
        var m = Machine(policy: self == .peerGone || self == .closingGracefully ? .asyncFace : .delegateFace)
        switch self {
        case .waiting: break
        case .open: _ = m.activate()
        case .halfClosed:
            _ = m.activate()
            _ = m.halfClose()
        case .closingGracefully:
            _ = m.activate()
            _ = m.writes.enqueue(
                id: m.nextID(),
                bytes: ByteBuffer(string: "x"),
                timeout: nil,
                waiter: .task(nil),
                canSend: true
            )
            _ = m.closeGracefully()
        case .peerGone:
            _ = m.activate()
            _ = m.channelEnded()
        case .closed:
            _ = m.close(error: nil)
        case .closedWithError:
            _ = m.activate()
            _ = m.close(error: .closedByPeer)
        }
        return m
    }
}

/// The events of the table.
enum MachineEvent: String, CaseIterable, CustomStringConvertible {
    case activate, queueRead, queueWrite, halfClose, closeGracefully, closeAfterReads, channelEnded, requestTLS, close
    case closedByCaller
    var description: String { rawValue }

    /// Applies the event; renders its answer and the phase after it.
    fileprivate func apply(to m: inout Machine) -> String {
        let answer: String
        switch self {
        case .activate: answer = "\(m.activate())"
        case .queueRead: answer = refusal(m.readRefusal)
        case .queueWrite: answer = refusal(m.writeRefusal)
        case .halfClose: answer = "\(m.halfClose())"
        case .closeGracefully: answer = m.closeGracefully() ? "wait for writes" : "close now"
        case .closeAfterReads: answer = m.closeAfter(.reads) ? "close now" : "wait"
        case .channelEnded: answer = render(m.channelEnded())
        case .requestTLS: answer = refusal(m.requestTLS())
        case .close: answer = "\(m.close(error: .readTimeout))"
        case .closedByCaller:
            m.closedByCaller()
            answer = "done"
        }
        return "\(answer) → \(render(m.phase))"
    }
}

/// Every phase × event: the machine's answer, then its phase.
private let table: [MachinePhase: [MachineEvent: String]] = [
    .waiting: [
        .activate: "true → open", .queueRead: "accepted → waiting", .queueWrite: "accepted → waiting",
        .halfClose: "false → waiting", .closeGracefully: "close now → waiting", .closeAfterReads: "close now → waiting",
        .channelEnded: "serve buffered reads, then close → waiting", .requestTLS: "accepted → waiting",
        .close: "true → closed: readTimeout",
        .closedByCaller: "done → waiting",
    ],
    .open: [
        .activate: "false → open", .queueRead: "accepted → open", .queueWrite: "accepted → open",
        .halfClose: "true → half-closed", .closeGracefully: "close now → open", .closeAfterReads: "close now → open",
        .channelEnded: "serve buffered reads, then close → open", .requestTLS: "accepted → open",
        .close: "true → closed: readTimeout",
        .closedByCaller: "done → open",
    ],
    .halfClosed: [
        .activate: "false → half-closed", .queueRead: "accepted → half-closed",
        .queueWrite: "refused: closed → half-closed", .halfClose: "false → half-closed",
        .closeGracefully: "close now → half-closed", .closeAfterReads: "close now → half-closed",
        .channelEnded: "serve buffered reads, then close → half-closed", .requestTLS: "accepted → half-closed",
        .close: "true → closed: readTimeout",
        .closedByCaller: "done → half-closed",
    ],
    .closingGracefully: [
        .activate: "false → closing gracefully", .queueRead: "refused: closed → closing gracefully",
        .queueWrite: "refused: closed → closing gracefully", .halfClose: "false → closing gracefully",
        .closeGracefully: "close now → closing gracefully", .closeAfterReads: "wait → closing gracefully",
        .channelEnded: "serve buffered reads → peer gone", .requestTLS: "accepted → closing gracefully",
        .close: "true → closed: readTimeout",
        .closedByCaller: "done → closing gracefully",
    ],
    .peerGone: [
        .activate: "false → peer gone", .queueRead: "accepted → peer gone", .queueWrite: "refused: closed → peer gone",
        .halfClose: "false → peer gone", .closeGracefully: "close now → peer gone",
        .closeAfterReads: "close now → peer gone", .channelEnded: "serve buffered reads → peer gone",
        .requestTLS: "accepted → peer gone", .close: "true → closed: readTimeout",
        .closedByCaller: "done → peer gone",
    ],
    .closed: [
        .activate: "false → closed", .queueRead: "refused: closed → closed", .queueWrite: "refused: closed → closed",
        .halfClose: "false → closed", .closeGracefully: "close now → closed", .closeAfterReads: "close now → closed",
        .channelEnded: "ignore → closed", .requestTLS: "refused: closed → closed", .close: "false → closed",
        .closedByCaller: "done → closed",
    ],
    .closedWithError: [
        .activate: "false → closed: closed", .queueRead: "refused: closed → closed: closed",
        .queueWrite: "refused: closed → closed: closed", .halfClose: "false → closed: closed",
        .closeGracefully: "close now → closed: closed", .closeAfterReads: "close now → closed: closed",
        .channelEnded: "ignore → closed: closed", .requestTLS: "refused: closed → closed: closed",
        .close: "false → closed: closed",
        .closedByCaller: "done → closed",
    ],
]

struct TCPStateMachineTests {
    @Test(arguments: MachinePhase.allCases, MachineEvent.allCases)
    func everyPhaseAndEvent(phase: MachinePhase, event: MachineEvent) {
        var m = phase.make()
        #expect(event.apply(to: &m) == table[phase]![event], "\(phase) × \(event)")
    }

    @Test func closeAfterReadingWaitsForTheReadQueueAndCloseAfterWritingForTheWriteQueue() {
        var m = Machine(policy: .delegateFace)
        _ = m.activate()
        _ = m.reads.enqueue(id: m.nextID(), kind: .length(2), timeout: nil, waiter: .delegate(tag: 1, destination: nil))
        _ = m.writes.enqueue(
            id: m.nextID(),
            bytes: ByteBuffer(string: "x"),
            timeout: nil,
            waiter: .delegate(tag: 2),
            canSend: true
        )
        let answer1 = m.closeAfter(.reads)
        #expect(!answer1)
        m.reads.received(ByteBuffer(string: "ab"))
        guard case .deliver = m.reads.next() else {
            Issue.record("expected a delivery")
            return
        }
        #expect(m.isDrainedForClose)
        var writer = Machine(policy: .delegateFace)
        _ = writer.activate()
        _ = writer.writes.enqueue(
            id: writer.nextID(),
            bytes: ByteBuffer(string: "x"),
            timeout: nil,
            waiter: .delegate(tag: 2),
            canSend: true
        )
        let answer2 = writer.closeAfter(.writes)
        #expect(!answer2)
        _ = writer.writes.written(id: 1, length: 1)
        #expect(writer.isDrainedForClose)
    }

    @Test func anAsyncConnectionThatLostItsPeerServesItsBufferAndRefusesWrites() {
        var m = Machine(policy: .asyncFace)
        _ = m.activate()
        m.reads.received(ByteBuffer(string: "tail"))
        let answer3 = m.channelEnded()
        #expect(render(answer3) == "serve buffered reads")
        #expect(m.reads.inputClosed)
        #expect(refusal(m.writeRefusal) == "refused: closed")
        #expect(m.writeRefusal?.code == GCDAsyncSocketError.closedByPeer.code)
        #expect(String(buffer: m.reads.receiveBuffer.front) == "tail")
    }

    @Test func theEndOfTheChannelDuringAHandshakeIsATLSError() {
        var m = Machine(policy: .asyncFace)
        _ = m.activate()
        let answer4 = m.requestTLS()
        #expect(answer4 == nil)
        let answer5 = m.tlsReadyToStart()
        #expect(answer5)
        let answer6 = m.tlsContextReady()
        #expect(answer6)
        let answer7 = m.channelEnded()
        #expect(render(answer7) == "close: tls")
    }

    // MARK: the TLS upgrade

    @Test func theUpgradeWaitsForTheQueuesThenPreparesHandshakesAndSecures() {
        var m = Machine(policy: .delegateFace)
        _ = m.activate()
        let before = m.nextID()
        _ = m.reads.enqueue(id: before, kind: .length(1), timeout: nil, waiter: .delegate(tag: 1, destination: nil))
        let answer8 = m.requestTLS()
        #expect(answer8 == nil)
        #expect(m.tls == .requested(barrier: before))
        #expect(m.reads.tlsBarrier == before && m.writes.tlsBarrier == before)
        let answer9 = m.tlsReadyToStart()
        #expect(!answer9)  // a read queued before the marker is still pending
        _ = m.reads.cancel(id: before)
        let answer10 = m.tlsContextReady()
        #expect(!answer10)  // not preparing yet
        let answer11 = m.tlsReadyToStart()
        #expect(answer11)
        #expect(m.tls == .preparing(barrier: before))
        let answer12 = m.tlsReadyToStart()
        #expect(!answer12)  // once
        let answer13 = m.tlsHandshakeCompleted()
        #expect(!answer13)  // no handler yet
        let answer14 = m.tlsContextReady()
        #expect(answer14)
        m.tlsTrustRejected()
        #expect(m.tls == .handshaking(barrier: before, trustRejected: true))
        #expect(m.channelError(ChannelError.eof).domain == .tls)
        let answer15 = m.tlsHandshakeCompleted()
        #expect(answer15)
        #expect(m.tls == .secured && m.reads.tlsBarrier == nil && m.writes.tlsBarrier == nil)
        let answer16 = m.requestTLS()
        #expect(answer16?.code == GCDAsyncSocketError.Code.badConfig)
    }

    @Test func aSecondUpgradeIsABadConfigurationAndCloseEndsTheUpgrade() {
        var m = Machine(policy: .asyncFace)
        let answer17 = m.requestTLS()
        #expect(answer17 == nil)
        let answer18 = m.requestTLS()
        #expect(answer18?.code == GCDAsyncSocketError.Code.badConfig)
        let answer19 = m.tlsReadyToStart()
        #expect(!answer19)  // not active yet
        _ = m.activate()
        let answer20 = m.tlsReadyToStart()
        #expect(answer20)
        _ = m.close(error: nil)
        #expect(m.tls == .none && m.reads.tlsBarrier == nil)
        let answer21 = m.tlsContextReady()
        #expect(!answer21)
        #expect(m.channelError(ChannelError.eof).domain != .tls)
    }
}
