import NIOCore
import Testing

@testable import TetherSockets

/// Feeds growing buffers to one matcher and returns its verdicts.
private func verdicts(_ kind: ReadKind, _ inputs: String...) -> [ReadMatch] {
    var matcher = ReadMatcher(kind: kind)
    return inputs.map { matcher.match(ByteBuffer(string: $0)) }
}

struct ReadMatcherTests {
    @Test func availableReadTakesEverythingUpToItsCap() {
        #expect(verdicts(.available(maxLength: 0), "", "hello") == [.incomplete(bytesDone: 0), .complete(count: 5)])
        #expect(verdicts(.available(maxLength: 3), "hello") == [.complete(count: 3)])
    }

    @Test func lengthReadWaitsForEveryByte() {
        #expect(verdicts(.length(4), "abc", "abcdef") == [.incomplete(bytesDone: 3), .complete(count: 4)])
    }

    @Test func separatorReadIncludesTheSeparatorAndLeavesTheRest() {
        #expect(verdicts(.separator([0x0D, 0x0A], maxLength: 0), "GET /\r\nHost") == [.complete(count: 7)])
    }

    @Test func separatorSplitAcrossChunksIsFound() {
        let results = verdicts(.separator([0x0D, 0x0A], maxLength: 0), "line\r", "line\r\nmore")
        #expect(results == [.incomplete(bytesDone: 5), .complete(count: 6)])
    }

    @Test func separatorScanResumesWhereItStopped() {
        var matcher = ReadMatcher(kind: .separator(Array("END".utf8), maxLength: 0))
        let first = matcher.match(ByteBuffer(string: "aaaaEN"))
        #expect(first == .incomplete(bytesDone: 6))
        #expect(matcher.scanned == 4)
        let second = matcher.match(ByteBuffer(string: "aaaaENEND"))
        #expect(second == .complete(count: 9))
    }

    @Test func separatorEndingExactlyAtMaxLengthSucceeds() {
        #expect(verdicts(.separator([0x0A], maxLength: 4), "abc\n") == [.complete(count: 4)])
    }

    @Test func separatorBeyondMaxLengthMaxesOut() {
        #expect(verdicts(.separator([0x0A], maxLength: 4), "abc", "abcd\n") == [.incomplete(bytesDone: 3), .maxedOut])
    }

    @Test func multiByteSeparatorMustMatchEntirely() {
        let results = verdicts(.separator([0x0D, 0x0A], maxLength: 0), "a\rb\nc", "a\rb\nc\r\n")
        #expect(results == [.incomplete(bytesDone: 5), .complete(count: 7)])
    }
}

struct SocketLifecycleTests {
    @Test func aNewSocketIsDisconnectedAndRefusesOperations() {
        let lifecycle = SocketLifecycle()
        #expect(lifecycle.isDisconnected)
        #expect(!lifecycle.isConnected)
        #expect(!lifecycle.acceptsOperations)
    }

    @Test func connectingTakesOperationsButIsNeitherConnectedNorDisconnected() {
        var lifecycle = SocketLifecycle()
        let life = lifecycle.startConnecting()
        #expect(lifecycle.acceptsOperations)
        #expect(!lifecycle.isConnected && !lifecycle.isDisconnected)
        let verdict1 = lifecycle.connectionEstablished(life: life)
        #expect(verdict1)
        #expect(lifecycle.isConnected)
    }

    @Test func aListenerIsNotConnectedAndRefusesOperations() {
        var lifecycle = SocketLifecycle()
        _ = lifecycle.startListening()
        #expect(!lifecycle.isConnected && !lifecycle.isDisconnected)
        #expect(!lifecycle.acceptsOperations)
        #expect(!lifecycle.canStart)
    }

    @Test func aLifeEndsExactlyOnce() {
        var lifecycle = SocketLifecycle()
        let life = lifecycle.startConnected()
        let verdict2 = lifecycle.ended(life: life)
        #expect(verdict2)
        let verdict3 = lifecycle.ended(life: life)
        #expect(!verdict3)
        #expect(lifecycle.isDisconnected)
    }

    @Test func eventsOfAnEarlierLifeAreIgnored() {
        var lifecycle = SocketLifecycle()
        let first = lifecycle.startConnecting()
        _ = lifecycle.ended(life: first)
        let second = lifecycle.startConnecting()
        let verdict4 = lifecycle.connectionEstablished(life: first)
        #expect(!verdict4)
        let verdict5 = lifecycle.ended(life: first)
        #expect(!verdict5)
        #expect(lifecycle.isCurrent(life: second))
    }

    @Test func disconnectAfterIORefusesNewOperationsButStaysConnected() {
        var lifecycle = SocketLifecycle()
        let life = lifecycle.startConnected()
        let verdict6 = lifecycle.closeRequestedAfterIO()
        #expect(verdict6)
        #expect(!lifecycle.acceptsOperations)
        #expect(lifecycle.isConnected)
        let verdict7 = lifecycle.ended(life: life)
        #expect(verdict7)
    }

    @Test func disconnectAfterIOWhileConnectingStillLetsTheConnectionComplete() {
        var lifecycle = SocketLifecycle()
        let life = lifecycle.startConnecting()
        let verdict8 = lifecycle.closeRequestedAfterIO()
        #expect(verdict8)
        #expect(!lifecycle.isConnected)
        let verdict9 = lifecycle.connectionEstablished(life: life)
        #expect(verdict9)
        #expect(lifecycle.isConnected)
    }
}
