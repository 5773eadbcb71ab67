import Foundation
import NIOCore
import Testing
import TetherCore
import TetherSockets

private func connectAsync() async throws -> (TCPConnection, RawPeer, RawListener) {
    let listener = try RawListener()
    async let accepted = onThread { listener.accept() }
    let connection = try await TCPConnection.connect(host: "127.0.0.1", port: Int(listener.port), timeout: .seconds(5))
    return (connection, try await accepted, listener)
}

private func stxBytes(_ frames: [STXFrame]) throws -> [UInt8] {
    var buffer = ByteBuffer()
    for frame in frames { try STXFrameCodec().encode(frame, into: &buffer) }
    return Array(buffer.readableBytesView)
}

@Suite(.timeLimit(.minutes(1)))
struct TCPConnectionFramesTests {
    @Test func stxFramesArriveWholeFromCoalescedAndSplitWrites() async throws {
        let (connection, peer, listener) = try await connectAsync()
        defer {
            peer.close()
            listener.close()
        }
        let sent = (0..<40).map { index in
            STXFrame(destination: UInt16(index), source: 7, bytes: (0..<(index % 13)).map { UInt8($0 &+ index) })
        }
        let wire = try stxBytes(sent)
        let half = wire.count / 2
        try await onThread {
            peer.send(Array(wire[..<half]))
            for byte in wire[half...] { peer.send([byte]) }
        }
        var received: [STXFrame] = []
        for try await frame in connection.frames(STXFrameCodec()) {
            received.append(frame)
            if received.count == sent.count { break }
        }
        #expect(received == sent)
        try await connection.close()
    }

    @Test("frames(_:timeout:): a frame that stops half-way times out, its bytes kept; the next iteration gets it whole")
    func aFrameThatStopsHalfWayTimesOut() async throws {
        let (connection, peer, listener) = try await connectAsync()
        defer {
            peer.close()
            listener.close()
        }
        let vector: [UInt8] = [0x02, 0x01, 0x00, 0x02, 0x00, 0x02, 0x00, 0x68, 0x69, 0xDA]
        peer.send(Array(vector[..<8]))
        do {
            for try await frame in connection.frames(STXFrameCodec(), timeout: .milliseconds(200)) {
                Issue.record("a frame from 8 of its 10 bytes: \(frame)")
            }
            Issue.record("the iteration ended without a timeout")
        } catch GCDAsyncSocketError.Code.readTimeout {}
        peer.send(Array(vector[8...]))
        var frames = connection.frames(STXFrameCodec(), timeout: .seconds(10)).makeAsyncIterator()
        let frame = try #require(try await frames.next())
        #expect(frame == STXFrame(destination: 1, source: 2, bytes: "hi".utf8))
        try await connection.close()
    }

    @Test func theContractVectorDecodesAndEncodes() async throws {
        let (connection, peer, listener) = try await connectAsync()
        defer {
            peer.close()
            listener.close()
        }
        let vector: [UInt8] = [0x02, 0x01, 0x00, 0x02, 0x00, 0x02, 0x00, 0x68, 0x69, 0xDA]
        peer.send(vector)
        var frames = connection.frames(STXFrameCodec()).makeAsyncIterator()
        let frame = try #require(try await frames.next())
        #expect(frame.destination == 1 && frame.source == 2 && String(buffer: frame.payload) == "hi")
        try await connection.write(frame, using: STXFrameCodec())
        #expect(try await onThread { peer.receive(count: vector.count) } == vector)
        try await connection.close()
    }

    @Test func framesAndDirectReadsInterleave() async throws {
        let (connection, peer, listener) = try await connectAsync()
        defer {
            peer.close()
            listener.close()
        }
        let one = STXFrame(destination: 1, source: 1, bytes: Array("one".utf8))
        let two = STXFrame(destination: 2, source: 2, bytes: Array("two".utf8))
        peer.send(try stxBytes([one]) + Array("RAW\n".utf8) + (try stxBytes([two])))
        var first = connection.frames(STXFrameCodec()).makeAsyncIterator()
        #expect(try await first.next() == one)
        let raw = try await connection.read(upTo: [0x0A])
        #expect(String(buffer: raw) == "RAW\n")
        var second = connection.frames(STXFrameCodec()).makeAsyncIterator()
        #expect(try await second.next() == two)
        try await connection.close()
    }

    @Test func framesDecodedAheadGoBackWhenADirectReadComesBetweenSteps() async throws {
        let (connection, peer, listener) = try await connectAsync()
        defer {
            peer.close()
            listener.close()
        }
        let frames = (1...10).map { STXFrame(destination: UInt16($0), source: 0, bytes: Array("frame \($0)".utf8)) }
        // One send: every frame is buffered when the first step decodes, so the step decodes the others ahead.
        peer.send(try stxBytes(frames))
        var iterator = connection.frames(STXFrameCodec()).makeAsyncIterator()
        #expect(try await iterator.next() == frames[0])
        #expect(try await iterator.next() == frames[1])
        // The third frame's bytes, read directly, come back exactly; the iterator goes on with the fourth.
        let third = try stxBytes([frames[2]])
        let raw = try await connection.read(toLength: third.count, timeout: .seconds(5))
        #expect(Array(raw.readableBytesView) == third)
        #expect(try await iterator.next() == frames[3])
        var rest: [STXFrame] = []
        while rest.count < 6, let frame = try await iterator.next() { rest.append(frame) }
        #expect(rest == Array(frames[4...]))
        try await connection.close()
    }

    @Test func aFramingErrorBehindDecodedFramesSurfacesAtItsOwnStep() async throws {
        let (connection, peer, listener) = try await connectAsync()
        defer {
            peer.close()
            listener.close()
        }
        let good = (1...2).map { STXFrame(destination: UInt16($0), source: 9, bytes: Array("ok".utf8)) }
        var corrupt = try stxBytes([STXFrame(destination: 3, source: 9, bytes: Array("bad".utf8))])
        corrupt[corrupt.count - 1] ^= 0xFF
        peer.send(try stxBytes(good) + corrupt)
        var iterator = connection.frames(STXFrameCodec()).makeAsyncIterator()
        #expect(try await iterator.next() == good[0])
        #expect(try await iterator.next() == good[1])
        do {
            _ = try await iterator.next()
            Issue.record("expected a checksum mismatch")
        } catch let error as FramingError {
            #expect(error.code == .checksumMismatch)
        }
        let drained = try await connection.read(toLength: corrupt.count, timeout: .seconds(5))
        #expect(Array(drained.readableBytesView) == corrupt)
        try await connection.close()
    }

    @Test func aFramingErrorSurfacesAndTheBadBytesStayBuffered() async throws {
        let (connection, peer, listener) = try await connectAsync()
        defer {
            peer.close()
            listener.close()
        }
        var corrupt = try stxBytes([STXFrame(destination: 1, source: 2, bytes: Array("hi".utf8))])
        corrupt[corrupt.count - 1] ^= 0xFF
        peer.send(corrupt)
        var frames = connection.frames(STXFrameCodec()).makeAsyncIterator()
        do {
            _ = try await frames.next()
            Issue.record("expected a checksum mismatch")
        } catch let error as FramingError {
            #expect(error.code == .checksumMismatch)
            #expect(error.bytes.map { Array($0.readableBytesView) } == corrupt)
        }
        let drained = try await connection.read(toLength: corrupt.count, timeout: .seconds(5))
        #expect(Array(drained.readableBytesView) == corrupt)
        try await connection.close()
    }

    @Test func theSequenceEndsAtAFrameBoundaryAndThrowsMidFrame() async throws {
        let (connection, peer, listener) = try await connectAsync()
        defer { listener.close() }
        let frame = STXFrame(destination: 3, source: 4, bytes: Array("end".utf8))
        peer.send(try stxBytes([frame]))
        peer.shutdownWrite()
        var received: [STXFrame] = []
        for try await decoded in connection.frames(STXFrameCodec()) { received.append(decoded) }
        #expect(received == [frame])
        try await connection.close()
        peer.close()

        let (second, secondPeer, secondListener) = try await connectAsync()
        defer { secondListener.close() }
        secondPeer.send(Array(try stxBytes([frame]).dropLast(2)))
        secondPeer.shutdownWrite()
        var iterator = second.frames(STXFrameCodec()).makeAsyncIterator()
        do {
            _ = try await iterator.next()
            Issue.record("expected a truncated frame")
        } catch let error as FramingError {
            #expect(error.code == .truncatedFrame)
        }
        try await second.close()
        secondPeer.close()
    }

    @Test func anEncodingErrorWritesNothing() async throws {
        let (connection, peer, listener) = try await connectAsync()
        defer {
            peer.close()
            listener.close()
        }
        let codec = STXFrameCodec(maxPayloadLength: 4)
        let tooLarge = STXFrame(destination: 1, source: 1, bytes: Array("too large".utf8))
        await #expect(throws: FramingError.self) { try await connection.write(tooLarge, using: codec) }
        let fits = STXFrame(destination: 1, source: 1, bytes: Array("ok".utf8))
        try await connection.write(fits, using: codec)
        let expected = try stxBytes([fits])
        #expect(try await onThread { peer.receive(count: expected.count) } == expected)
        try await connection.close()
    }

    @Test func lineAndLengthCodecsWorkOverTheConnection() async throws {
        let (connection, peer, listener) = try await connectAsync()
        defer {
            peer.close()
            listener.close()
        }
        peer.send(Array("alpha\r\nbeta\r\n".utf8) + [0, 0, 0, 3] + Array("xyz".utf8))
        var lines = connection.frames(DelimiterFrameCodec(delimiter: .crlf)).makeAsyncIterator()
        #expect(try await lines.next().map { String(buffer: $0) } == "alpha")
        #expect(try await lines.next().map { String(buffer: $0) } == "beta")
        var lengths = connection.frames(LengthFieldFrameCodec()).makeAsyncIterator()
        #expect(try await lengths.next().map { String(buffer: $0) } == "xyz")
        try await connection.close()
    }

    @Test func cancellingAWaitingFrameReadConsumesNothing() async throws {
        let (connection, peer, listener) = try await connectAsync()
        defer {
            peer.close()
            listener.close()
        }
        let partial = Array(try stxBytes([STXFrame(destination: 9, source: 9, bytes: [1, 2, 3])]).prefix(5))
        peer.send(partial)
        let waiting = Task {
            var iterator = connection.frames(STXFrameCodec()).makeAsyncIterator()
            return try await iterator.next()
        }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiting.value }
        let kept = try await connection.read(toLength: 5, timeout: .seconds(5))
        #expect(Array(kept.readableBytesView) == partial)
        try await connection.close()
    }
}
