import Foundation
import NIOCore
import Testing

@testable import TetherSockets

/// Sequences of events through the UDP machine (no sockets): what the table's single steps add up to.
struct UDPStateMachineScenarioTests {
    private func ready(families: [NIOBSDSocket.ProtocolFamily] = [.inet]) -> UDPStateMachine {
        var machine = UDPStateMachine()
        _ = machine.handle(.bindAsked(families: families.count))
        for family in families { _ = machine.handle(.channelActive(family, stillWanted: true)) }
        return machine
    }

    @Test("packets wait for every channel; reads start when receiving was asked for meanwhile")
    func bindingWaitsForEveryChannel() {
        var machine = UDPStateMachine()
        #expect(machine.handle(.bindAsked(families: 2)).text == "register")
        #expect(machine.handle(.receiveAsked(.continuous)).text == "—")
        #expect(machine.handle(.sendAsked(UDPFixture.outgoing("one", tag: 1))).text == "—")
        #expect(machine.handle(.channelActive(.inet6, stillWanted: false)).text == "close(v6)")
        #expect(machine.stateName == "binding(1)")
        #expect(machine.handle(.channelActive(.inet, stillWanted: true)).text == "reads(on), publish, write(1, one)")
        #expect(machine.families == [.inet])
    }

    @Test("a destination on a connected socket, or none on an unconnected one, fails that send only")
    func destinationMisuse() {
        var machine = ready()
        #expect(machine.handle(.sendAsked(UDPFixture.outgoing("a", tag: 1, to: nil))).text == "notSent(1, badConfig)")
        #expect(machine.handle(.connectAsked(.address(UDPFixture.peer))).text == "connect(9)")
        #expect(machine.handle(.connectCompleted(.success(()))).text == "publish, connected(9)")
        #expect(machine.handle(.sendAsked(UDPFixture.outgoing("b", tag: 2))).text == "notSent(2, badConfig)")
        #expect(
            machine.handle(.sendAsked(UDPFixture.outgoing("c", tag: 3, to: .host("h", port: 1)))).text
                == "resolve(4, h:1), await(4)"
        )
        #expect(machine.handle(.resolved(id: 4, .success([UDPFixture.peer]))).text == "notSent(3, badConfig)")
        #expect(machine.handle(.sendAsked(UDPFixture.outgoing("d", tag: 4, to: nil))).text == "write(1, d)")
        #expect(machine.stateName == "writing")
    }

    @Test("a failed connect or lookup is reported, and the next packet goes on")
    func failuresGoOn() {
        var machine = ready()
        _ = machine.handle(.connectAsked(.host("nowhere", port: 1)))
        _ = machine.handle(.sendAsked(UDPFixture.outgoing("a", tag: 1)))
        let lookupFailed = machine.handle(.resolved(id: 1, .failure(IOError(errnoCode: 2, reason: "lookup"))))
        #expect(lookupFailed.text == "notConnected(other), write(1, a)")
        var connectFails = ready()
        _ = connectFails.handle(.connectAsked(.address(UDPFixture.peer)))
        let refused = connectFails.handle(.connectCompleted(.failure(IOError(errnoCode: 111, reason: "connect"))))
        #expect(refused.text == "notConnected(other)")
        #expect(connectFails.connected == nil)
        #expect(connectFails.stateName == "idle")
    }

    @Test("an address of a family without a channel fails that packet")
    func familyWithoutChannel() throws {
        var machine = ready(families: [.inet6])
        #expect(machine.handle(.sendAsked(UDPFixture.outgoing("a", tag: 1))).text == "notSent(1, other)")
        #expect(machine.handle(.connectAsked(.address(UDPFixture.peer))).text == "notConnected(other)")
    }

    @Test("an over-long IPv4 datagram fails with EMSGSIZE; the socket stays usable")
    func overLongIPv4() {
        var machine = ready()
        let long = UDPOutgoing(
            data: Data(count: UDPStateMachine.maxIPv4Datagram + 1),
            destination: .address(UDPFixture.peer),
            timeout: 5,
            tag: 1
        )
        guard case .deliver(.notSent(1, let error)) = machine.handle(.sendAsked(long)).first else {
            Issue.record("expected notSent")
            return
        }
        #expect(error.posixErrorCode == .EMSGSIZE)
        #expect(machine.stateName == "idle")
    }

    @Test("the timer fails a write the kernel had no room for; its late completion is ignored")
    func writeTimesOut() {
        var machine = ready()
        _ = machine.handle(.sendAsked(UDPFixture.outgoing("a", tag: 1)))
        _ = machine.handle(.sendAsked(UDPFixture.outgoing("b", tag: 2)))
        #expect(machine.handle(.writeStarted(id: 1)).text == "arm(1, 5.0s)")
        #expect(machine.handle(.timerFired(id: 1)).text == "notSent(1, sendTimeout), write(2, b)")
        #expect(machine.handle(.writeCompleted(id: 1, .success(()))).text == "—")
        #expect(machine.handle(.writeCompleted(id: 2, .success(()))).text == "sent(2)")
        #expect(machine.handle(.writeStarted(id: 2)).text == "—")
    }

    @Test("a write without a timeout arms no timer; a completed armed write cancels its timer")
    func timers() {
        var machine = ready()
        _ = machine.handle(.sendAsked(UDPFixture.outgoing("a", tag: 1, timeout: -1)))
        #expect(machine.handle(.writeStarted(id: 1)).text == "—")
        #expect(
            machine.handle(.writeCompleted(id: 1, .failure(IOError(errnoCode: 1, reason: "x")))).text
                == "notSent(1, other)"
        )
        _ = machine.handle(.sendAsked(UDPFixture.outgoing("b", tag: 2)))
        _ = machine.handle(.writeStarted(id: 2))
        #expect(machine.handle(.writeCompleted(id: 2, .success(()))).text == "cancel(2), sent(2)")
    }

    @Test("a send filter's no reports the datagram sent; its yes writes it; sends wait for the verdict")
    func sendFilter() {
        var machine = ready()
        machine.settings.hasSendFilter = true
        #expect(machine.handle(.sendAsked(UDPFixture.outgoing("a", tag: 1))).text == "sendFilter(1)")
        #expect(machine.handle(.sendAsked(UDPFixture.outgoing("b", tag: 2))).text == "—")
        #expect(machine.handle(.sendFilterAnswered(keep: false)).text == "sent(1), sendFilter(2)")
        #expect(machine.handle(.sendFilterAnswered(keep: true)).text == "write(1, b)")
    }

    @Test("close after sending ends the life once the queue is empty, also when asked during binding")
    func closeAfterSending() {
        var machine = UDPStateMachine()
        _ = machine.handle(.bindAsked(families: 1))
        _ = machine.handle(.sendAsked(UDPFixture.outgoing("a", tag: 1)))
        #expect(machine.handle(.closeAfterSendingAsked).text == "publish")
        #expect(!machine.acceptsDirectSends)
        #expect(machine.handle(.channelActive(.inet, stillWanted: true)).text == "publish, write(1, a)")
        #expect(machine.stateName == "draining")
        #expect(machine.handle(.writeCompleted(id: 1, .success(()))).text == "sent(1), publish, end")
        #expect(machine.stateName == "closed")
    }

    @Test("a receive filter judges one datagram at a time, in order")
    func receiveFilterOrder() {
        var machine = ready()
        machine.settings.hasReceiveFilter = true
        #expect(machine.handle(.receiveAsked(.continuous)).text == "reads(on)")
        #expect(machine.handle(.datagramReceived(UDPFixture.datagram("one"))).text == "receiveFilter(one)")
        #expect(machine.handle(.datagramReceived(UDPFixture.datagram("two"))).text == "—")
        let first = UDPStateMachine.Event.receiveFilterAnswered(
            keep: true,
            data: Data("one".utf8),
            from: UDPFixture.peer,
            context: "ONE"
        )
        #expect(machine.handle(first).text == "received(one, ONE), receiveFilter(two)")
        let second = UDPStateMachine.Event.receiveFilterAnswered(
            keep: false,
            data: Data("two".utf8),
            from: UDPFixture.peer,
            context: nil
        )
        #expect(machine.handle(second).text == "—")
    }

    @Test("receive-once skips datagrams the filter rejects and stops after the first delivered one")
    func receiveOnceWithFilter() {
        var machine = ready()
        machine.settings.hasReceiveFilter = true
        for text in ["x", "a", "b"] { _ = machine.handle(.datagramReceived(UDPFixture.datagram(text))) }
        #expect(machine.handle(.receiveAsked(.once)).text == "receiveFilter(x), reads(on)")
        let rejected = UDPStateMachine.Event.receiveFilterAnswered(
            keep: false,
            data: Data("x".utf8),
            from: UDPFixture.peer,
            context: nil
        )
        #expect(machine.handle(rejected).text == "receiveFilter(a)")
        let accepted = UDPStateMachine.Event.receiveFilterAnswered(
            keep: true,
            data: Data("a".utf8),
            from: UDPFixture.peer,
            context: nil
        )
        #expect(machine.handle(accepted).text == "received(a), reads(off)")
    }

    @Test("datagrams longer than the family's limit are truncated; a connected socket drops strangers")
    func truncationAndStrangers() throws {
        var machine = ready()
        machine.settings.maxReceiveIPv4 = 3
        _ = machine.handle(.receiveAsked(.continuous))
        #expect(machine.handle(.datagramReceived(UDPFixture.datagram("abcdef"))).text == "received(abc)")
        _ = machine.handle(.connectAsked(.address(UDPFixture.peer)))
        _ = machine.handle(.connectCompleted(.success(())))
        let stranger = try SocketAddress(ipAddress: "127.0.0.1", port: 10)
        #expect(machine.handle(.datagramReceived(UDPFixture.datagram("xyz", from: stranger))).text == "—")
        #expect(machine.handle(.datagramReceived(UDPFixture.datagram("xyz"))).text == "received(xyz)")
    }

    @Test("a channel closed under the life ends it with the error; one closed by request does not")
    func channelClosedUnderUs() {
        var machine = ready(families: [.inet, .inet6])
        #expect(machine.handle(.familyCloseAsked(.inet6)).text == "close(v6), publish")
        #expect(machine.handle(.channelClosed(.inet6, error: nil)).text == "—")
        let closed = machine.handle(.channelClosed(.inet, error: IOError(errnoCode: 9, reason: "recvmsg")))
        #expect(closed.text == "close(v4), publish, end(other)")
        #expect(machine.stateName == "closed")
        #expect(machine.handle(.closeAsked).text == "shutDown")
    }
}
