import Foundation
import Testing
import TetherSockets
import TetherTestSupport

@Suite(.timeLimit(.minutes(1)))
struct GCDAsyncSocketWritingTests {
    @Test func writesCompleteInOrderAndArriveIntact() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        var expected: [UInt8] = []
        for tag in 1...20 {
            let chunk = Array(repeating: UInt8(tag), count: tag * 100)
            expected += chunk
            connection.socket.write(Data(chunk), withTimeout: 5, tag: tag)
        }
        let total = expected.count
        let received = try await onThread { connection.peer.receive(count: total) }
        #expect(sameElements(received, expected))
        let events = try await connection.recorder.wait { $0.contains(.wrote(tag: 20)) }
        let tags = events.compactMap { if case .wrote(let tag) = $0 { tag } else { nil } }
        #expect(tags == Array(1...20))
    }

    @Test func largeWriteReportsPartialProgressThenCompletes() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        let payload = Data((0..<3_000_000).map { UInt8($0 & 0xFF) })
        connection.socket.write(payload, withTimeout: 10, tag: 5)
        var tag = 0
        let idle = connection.socket.progressOfWrite(returningTag: &tag, bytesDone: nil, total: nil)
        _ = idle
        let received = try await onThread { connection.peer.receive(count: payload.count) }
        #expect(received.count == payload.count)
        #expect(sameElements(Data(received), payload))
        let events = try await connection.recorder.wait { $0.contains(.wrote(tag: 5)) }
        let partial = events.compactMap { if case .partialWrite(let n, 5) = $0 { n } else { nil } }
        #expect(!partial.isEmpty)
        #expect(partial.reduce(0, +) < UInt(payload.count))
        #expect(connection.socket.progressOfWrite(returningTag: nil, bytesDone: nil, total: nil).isNaN)
    }

    @Test func writeTimeoutAgainstAPeerThatNeverReads() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        connection.peer.shrinkReceiveBuffer()
        connection.recorder.timeoutExtensions = [0.2]
        let big = Data(repeating: 7, count: 64 * 1024 * 1024)
        connection.socket.write(big, withTimeout: 0.5, tag: 3)
        connection.socket.write(Data("after"), withTimeout: 5, tag: 4)
        let error = try #require(try await connection.recorder.waitForDisconnect())
        #expect(error.code == .writeTimeout)
        #expect(error.message == "Write operation timed out")
        #expect(error.pendingWriteTags == [3, 4])
        let asks = connection.recorder.events.compactMap { event -> TimeInterval? in
            if case .writeTimeoutAsked(3, let elapsed, _) = event { return elapsed }
            return nil
        }
        #expect(asks.count == 2)
        #expect(abs(asks[1] - 0.7) < 0.001)
        #expect(!connection.recorder.events.contains(.wrote(tag: 3)))
    }

    @Test func writeProgressSnapshotsTheCurrentWrite() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        connection.peer.shrinkReceiveBuffer()
        let big = Data(repeating: 1, count: 32 * 1024 * 1024)
        connection.socket.write(big, withTimeout: -1, tag: 12)
        try await connection.recorder.wait { $0.contains { if case .partialWrite(_, 12) = $0 { true } else { false } } }
        let progress = try #require(connection.socket.writeProgress)
        #expect(progress.tag == 12)
        #expect(progress.total == big.count)
        #expect(progress.bytesDone > 0 && progress.bytesDone < big.count)
        var tag = 0
        var done: UInt = 0
        var total: UInt = 0
        let fraction = connection.socket.progressOfWrite(returningTag: &tag, bytesDone: &done, total: &total)
        #expect(tag == 12 && total == UInt(big.count) && fraction > 0 && fraction < 1)
    }
}
