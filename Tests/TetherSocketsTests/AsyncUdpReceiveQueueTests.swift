import Foundation
import Testing

@testable import TetherSockets

/// The RunLoop-era receive model as a value, without I/O.
@Suite
struct AsyncUdpReceiveQueueTests {
    static func datagram(_ text: String) -> AsyncUdpReceiveQueue.Datagram {
        AsyncUdpReceiveQueue.Datagram(data: Data(text.utf8), host: "127.0.0.1", port: 9)
    }

    @Test("the first request becomes active at once; later ones wait in order")
    func requestsQueueInOrder() {
        var queue = AsyncUdpReceiveQueue()
        #expect(queue.enqueue(tag: 1, timeout: 5)?.tag == 1)
        #expect(queue.enqueue(tag: 2, timeout: 5) == nil)
        #expect(queue.enqueue(tag: 3, timeout: 5) == nil)
        #expect(queue.active?.tag == 1)
        #expect(queue.waiting.map(\.tag) == [2, 3])
    }

    @Test("nothing is read without an active request; one read at a time for the active one")
    func readsOnlyForTheActiveRequest() {
        var queue = AsyncUdpReceiveQueue()
        #expect(!queue.needsRead)
        _ = queue.enqueue(tag: 1, timeout: -1)
        #expect(queue.needsRead)
        queue.readStarted(true)
        #expect(!queue.needsRead)
        queue.arrived(Self.datagram("a"))
        #expect(!queue.needsRead && queue.hasOffer)
    }

    @Test("a refused datagram is gone and the same request stays active; an accepted one activates the next")
    func refusalKeepsTheRequest() throws {
        var queue = AsyncUdpReceiveQueue()
        let firstValue = queue.enqueue(tag: 1, timeout: 5)
        let first = try #require(firstValue)
        _ = queue.enqueue(tag: 2, timeout: 5)
        queue.arrived(Self.datagram("no"))
        let offerValue = queue.takeOffer()
        let offer = try #require(offerValue)
        #expect(offer.0 == first)
        #expect(queue.answered(first.id, accepted: false) == nil)
        #expect(queue.active == first)
        #expect(queue.needsRead)
        queue.arrived(Self.datagram("yes"))
        #expect(queue.takeOffer() != nil)
        #expect(queue.answered(first.id, accepted: true)?.tag == 2)
        #expect(queue.active?.tag == 2)
    }

    @Test("a timeout ends the active request and activates the next; a stale timer is ignored")
    func timeouts() throws {
        var queue = AsyncUdpReceiveQueue()
        let firstValue = queue.enqueue(tag: 1, timeout: 1)
        let first = try #require(firstValue)
        _ = queue.enqueue(tag: 2, timeout: 1)
        let outcomeValue = queue.timedOut(first.id)
        let outcome = try #require(outcomeValue)
        #expect(outcome.expired == first)
        #expect(outcome.next?.tag == 2)
        #expect(queue.timedOut(first.id) == nil)
        #expect(!queue.isDrained)
        let secondValue = queue.active
        let second = try #require(secondValue)
        _ = queue.timedOut(second.id)
        #expect(queue.isDrained)
    }

    @Test("a datagram read for a request that timed out waits for the next request")
    func aLateDatagramWaitsForTheNextRequest() throws {
        var queue = AsyncUdpReceiveQueue()
        let firstValue = queue.enqueue(tag: 1, timeout: 1)
        let first = try #require(firstValue)
        queue.readStarted(true)
        _ = queue.timedOut(first.id)
        queue.arrived(Self.datagram("late"))
        #expect(queue.takeOffer() == nil)
        _ = queue.enqueue(tag: 2, timeout: 1)
        let offerValue = queue.takeOffer()
        let offer = try #require(offerValue)
        #expect(offer.0.tag == 2 && offer.1.data == Data("late".utf8))
    }

    @Test("close drops every request and datagram")
    func removeAll() {
        var queue = AsyncUdpReceiveQueue()
        _ = queue.enqueue(tag: 1, timeout: 1)
        _ = queue.enqueue(tag: 2, timeout: 1)
        queue.arrived(Self.datagram("x"))
        queue.removeAll()
        #expect(queue.isDrained && !queue.hasOffer && !queue.needsRead)
    }
}
