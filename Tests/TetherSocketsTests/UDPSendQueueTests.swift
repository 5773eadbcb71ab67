import Foundation
import NIOCore
import Testing

@testable import TetherSockets

struct UDPSendQueueTests {
    @Test("packets come out in the order they went in, each with its own id")
    func firstInFirstOut() {
        var queue = UDPSendQueue()
        let first = queue.append(.send(UDPFixture.outgoing("one", tag: 1)))
        let second = queue.append(.connect(.address(UDPFixture.peer)))
        let third = queue.append(.send(UDPFixture.outgoing("three", tag: 3, to: nil)))
        #expect([first.id, second.id, third.id] == [1, 2, 3])
        #expect(queue.count == 3)
        #expect(queue.popFirst()?.id == 1)
        #expect(queue.popFirst()?.id == 2)
        #expect(queue.popFirst()?.id == 3)
        #expect(queue.popFirst() == nil)
        #expect(queue.isEmpty)
    }

    @Test("a packet to a name needs a lookup; one to an address or to the connected peer does not")
    func lookups() {
        var queue = UDPSendQueue()
        let named = queue.append(.send(UDPFixture.outgoing("a", tag: 1, to: .host("example.test", port: 7))))
        let connect = queue.append(.connect(.host("peer.test", port: 8)))
        let addressed = queue.append(.send(UDPFixture.outgoing("b", tag: 2)))
        let connected = queue.append(.send(UDPFixture.outgoing("c", tag: 3, to: nil)))
        #expect(named.lookup?.host == "example.test")
        #expect(named.lookup?.port == 7)
        #expect(connect.lookup?.host == "peer.test")
        #expect(addressed.lookup == nil)
        #expect(connected.lookup == nil)
    }

    @Test("removeAll drops every packet; ids keep counting")
    func removeAll() {
        var queue = UDPSendQueue()
        _ = queue.append(.send(UDPFixture.outgoing("a", tag: 1)))
        _ = queue.append(.send(UDPFixture.outgoing("b", tag: 2)))
        queue.removeAll()
        #expect(queue.isEmpty)
        #expect(queue.append(.send(UDPFixture.outgoing("c", tag: 3))).id == 3)
    }
}
