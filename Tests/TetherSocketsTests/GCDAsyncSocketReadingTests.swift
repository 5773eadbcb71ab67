import Foundation
import Testing
import TetherSockets

@Suite(.timeLimit(.minutes(1)))
struct GCDAsyncSocketReadingTests {
    @Test func readsRunInFIFOOrderWithTheirTags() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        let socket = connection.socket
        socket.readData(toLength: 3, withTimeout: 5, tag: 1)
        socket.readData(to: Data("\n"), withTimeout: 5, tag: 2)
        socket.readData(withTimeout: 5, tag: 3)
        connection.peer.send("abcline\nrest")
        let events = try await connection.recorder.wait { $0.count { if case .read = $0 { true } else { false } } == 3 }
        let reads = events.compactMap { event -> (String, Int)? in
            if case .read(let data, let tag) = event { return (String(decoding: data, as: UTF8.self), tag) }
            return nil
        }
        #expect(reads.map(\.0) == ["abc", "line\n", "rest"])
        #expect(reads.map(\.1) == [1, 2, 3])
    }

    @Test func availableReadHonoursItsMaximumAndLeavesTheRestBuffered() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        connection.peer.send("0123456789")
        let buffer = NSMutableData()
        connection.socket.readData(toLength: 1, withTimeout: 5, tag: 0)
        try await connection.recorder.wait { $0.contains(.read(Data("0"), tag: 0)) }
        connection.socket.readData(withTimeout: 5, buffer: buffer, bufferOffset: 0, maxLength: 4, tag: 1)
        connection.socket.readData(toLength: 5, withTimeout: 5, tag: 2)
        let events = try await connection.recorder.wait {
            $0.contains { if case .read(_, 2) = $0 { true } else { false } }
        }
        #expect(events.contains(.read(Data("1234"), tag: 1)))
        #expect(events.contains(.read(Data("56789"), tag: 2)))
    }

    @Test func separatorReadsWithAndWithoutMaximum() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        connection.socket.readData(to: GCDAsyncSocket.crlfData(), withTimeout: 5, tag: 1)
        connection.socket.readData(to: GCDAsyncSocket.crlfData(), withTimeout: 5, maxLength: 6, tag: 2)
        connection.peer.send("HELO x\r\nabcd\r\n")
        let events = try await connection.recorder.wait {
            $0.contains { if case .read(_, 2) = $0 { true } else { false } }
        }
        #expect(events.contains(.read(Data("HELO x\r\n"), tag: 1)))
        #expect(events.contains(.read(Data("abcd\r\n"), tag: 2)))
    }

    @Test func callerBufferIsWrittenAtTheOffsetAndGrown() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        let buffer = NSMutableData(data: Data("XXXXXXXX"))
        connection.socket.readData(toLength: 4, withTimeout: 5, buffer: buffer, bufferOffset: 2, tag: 1)
        connection.socket.readData(toLength: 4, withTimeout: 5, buffer: buffer, bufferOffset: 6, tag: 2)
        connection.peer.send("abcdefgh")
        try await connection.recorder.wait { $0.contains { if case .read(_, 2) = $0 { true } else { false } } }
        #expect(connection.recorder.reads().map(\.0) == [Data("abcd"), Data("efgh")])
        #expect(buffer as Data == Data("XXabcdefgh"))
    }

    @Test func ignoredReadsProduceNoCallback() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        let socket = connection.socket
        let buffer = NSMutableData(data: Data("ab"))
        socket.readData(toLength: 0, withTimeout: 5, tag: 90)
        socket.readData(to: Data(), withTimeout: 5, tag: 91)
        socket.readData(withTimeout: 5, buffer: buffer, bufferOffset: 3, tag: 92)
        socket.readData(to: Data("\r\n"), withTimeout: 5, maxLength: 1, tag: 93)
        socket.write(Data(), withTimeout: 5, tag: 94)
        socket.readData(toLength: 1, withTimeout: 5, tag: 1)
        connection.peer.send("z")
        let events = try await connection.recorder.wait { $0.contains(.read(Data("z"), tag: 1)) }
        #expect(events.count { if case .read = $0 { true } else { false } } == 1)
        #expect(!events.contains(.wrote(tag: 94)))
    }

    @Test func partialCallbacksReportIncrementsAndProgressSnapshotsTheCurrentRead() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        let socket = connection.socket
        #expect(socket.progressOfRead(returningTag: nil, bytesDone: nil, total: nil).isNaN)
        socket.readData(toLength: 10, withTimeout: -1, tag: 8)
        connection.peer.send("abc")
        try await connection.recorder.wait { $0.contains(.partialRead(3, tag: 8)) }
        var tag = 0
        var done: UInt = 0
        var total: UInt = 0
        let fraction = socket.progressOfRead(returningTag: &tag, bytesDone: &done, total: &total)
        #expect(tag == 8 && done == 3 && total == 10)
        #expect(abs(fraction - 0.3) < 0.001)
        #expect(socket.readProgress == socket.readProgress.map { _ in socket.readProgress! })
        connection.peer.send("defg")
        try await connection.recorder.wait { $0.contains(.partialRead(4, tag: 8)) }
        connection.peer.send("hij")
        let events = try await connection.recorder.wait { $0.contains(.read(Data("abcdefghij"), tag: 8)) }
        #expect(
            events.filter { if case .partialRead = $0 { true } else { false } } == [
                .partialRead(3, tag: 8), .partialRead(4, tag: 8),
            ]
        )
        #expect(socket.progressOfRead(returningTag: nil, bytesDone: nil, total: nil).isNaN)
    }

    @Test func nonLengthReadProgressIsOneWithTotalZero() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        connection.socket.readData(to: Data("\n"), withTimeout: -1, tag: 4)
        connection.peer.send("ab")
        try await connection.recorder.wait { $0.contains(.partialRead(2, tag: 4)) }
        let progress = try #require(connection.socket.readProgress)
        #expect(progress.tag == 4 && progress.total == 0 && progress.fractionCompleted == 1.0)
    }

    @Test func readTimeoutIsExtendedOnceThenFatal() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        connection.recorder.timeoutExtensions = [0.2]
        // "abc" must be buffered before the timed read starts, or a loaded machine could fire the first
        // timeout before the bytes arrive: one 4-byte send arrives in one kernel read, the first read
        // takes one byte and leaves the other three buffered.
        connection.socket.readData(toLength: 1, withTimeout: -1, tag: 5)
        connection.peer.send("xabc")
        try await connection.recorder.wait { $0.contains(.read(Data("x"), tag: 5)) }
        connection.socket.readData(toLength: 10, withTimeout: 0.2, tag: 6)
        connection.socket.readData(toLength: 1, withTimeout: -1, tag: 7)
        let error = try #require(try await connection.recorder.waitForDisconnect())
        #expect(error.code == .readTimeout)
        #expect(error.message == "Read operation timed out")
        let asks = connection.recorder.events.compactMap { event -> (Int, TimeInterval, UInt)? in
            if case .readTimeoutAsked(let tag, let elapsed, let done) = event { return (tag, elapsed, done) }
            return nil
        }
        #expect(asks.count == 2)
        #expect(asks.map(\.0) == [6, 6])
        #expect(abs(asks[0].1 - 0.2) < 0.001 && abs(asks[1].1 - 0.4) < 0.001)
        #expect(asks.map(\.2) == [3, 3])
        #expect(error.unreadData == Data("abc"))
        #expect(error.pendingReadTags == [6, 7])
    }

    @Test func zeroTimeoutFiresAtOnceAndNegativeNeverFires() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        connection.socket.readData(toLength: 1, withTimeout: 0, tag: 1)
        let error = try #require(try await connection.recorder.waitForDisconnect())
        #expect(error.code == .readTimeout)

        let second = try await connectToRawPeer()
        defer { second.close() }
        second.socket.readData(toLength: 1, withTimeout: -1, tag: 1)
        second.socket.readData(toLength: 1, withTimeout: 0.3, tag: 2)
        // The first read has no timeout: only the peer's byte, much later, completes it.
        try await Task.sleep(for: .milliseconds(500))
        #expect(second.recorder.events.count == 1)
        second.peer.send("x")
        try await second.recorder.wait { $0.contains(.read(Data("x"), tag: 1)) }
        #expect(try await second.recorder.waitForDisconnect()?.code == .readTimeout)
    }

    @Test func separatorBeyondMaxLengthClosesWithReadMaxedOut() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        connection.socket.readData(to: Data("\n"), withTimeout: 5, maxLength: 4, tag: 3)
        connection.peer.send("abcdefg\n")
        let error = try #require(try await connection.recorder.waitForDisconnect())
        #expect(error.code == .readMaxedOut)
        #expect(error.pendingReadTags == [3])
        #expect(error.unreadData.map { Data("abcdefg\n").starts(with: $0) } == true)
        #expect((error.unreadData?.count ?? 0) >= 4)
    }

    @Test func peerCloseMidReadDeliversTheDataFirstThenClosed() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        connection.socket.readData(toLength: 3, withTimeout: 5, tag: 1)
        connection.socket.readData(toLength: 10, withTimeout: 5, tag: 2)
        connection.peer.send("abcdef")
        connection.peer.shutdownWrite()
        let error = try #require(try await connection.recorder.waitForDisconnect())
        let events = connection.recorder.events
        #expect(events.first { if case .read = $0 { true } else { false } } == .read(Data("abc"), tag: 1))
        #expect(error.code == .closed)
        #expect(error.message == "Socket closed by remote peer")
        #expect(error.unreadData == Data("def"))
        #expect(error.pendingReadTags == [2])
        #expect(events.last?.isDisconnect == true)
    }

    @Test func peerCloseWhileIdleIsNoticed() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        connection.peer.close()
        let error = try #require(try await connection.recorder.waitForDisconnect())
        #expect(error.code == .closed)
    }

    @Test func peerResetReportsECONNRESET() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.listener.close() }
        connection.socket.readData(toLength: 10, withTimeout: 5, tag: 1)
        connection.peer.reset()
        let error = try #require(try await connection.recorder.waitForDisconnect())
        #expect(error.domain == .posix)
        #expect(error.posixErrorCode == .ECONNRESET)
    }

    @Test func halfCloseKeepsWritingWhenAutoDisconnectIsOff() async throws {
        let connection = try await connectToRawPeer { $0.autoDisconnectOnClosedReadStream = false }
        defer { connection.close() }
        let socket = connection.socket
        socket.readData(toLength: 2, withTimeout: 5, tag: 1)
        connection.peer.send("hi")
        connection.peer.shutdownWrite()
        try await connection.recorder.wait { $0.contains(.readStreamClosed) }
        #expect(connection.recorder.events.contains(.read(Data("hi"), tag: 1)))
        socket.write(Data("still here"), withTimeout: 5, tag: 2)
        try await connection.recorder.wait { $0.contains(.wrote(tag: 2)) }
        let received = try await onThread { connection.peer.receive(count: 10) }
        #expect(received == Array("still here".utf8))
        #expect(socket.isConnected)
        #expect(connection.recorder.events.count { $0 == .readStreamClosed } == 1)
        #expect(connection.recorder.events.disconnectCount == 0)
    }

    @Test func stickyAndSplitSeedFramesReadBackIdentically() async throws {
        // The seed's frames: 0x02 | dest(2) | src(2) | len(2, LE) | data | CRC, read header-then-body by tags.
        func frame(_ payload: [UInt8], destination: UInt16, source: UInt16) -> [UInt8] {
            var bytes: [UInt8] = [0x02]
            bytes += [UInt8(destination & 0xFF), UInt8(destination >> 8), UInt8(source & 0xFF), UInt8(source >> 8)]
            bytes += [UInt8(payload.count & 0xFF), UInt8(payload.count >> 8)]
            bytes += payload
            bytes.append(bytes.reduce(0, ^))
            return bytes
        }
        var frames: [[UInt8]] = []
        for index in 0..<50 {
            var payload: [UInt8] = []
            for offset in 0..<(index * 7 % 40) { payload.append(UInt8(truncatingIfNeeded: offset + index)) }
            frames.append(frame(payload, destination: UInt16(index), source: 9))
        }
        let wire = frames.flatMap { $0 }
        for byteByByte in [false, true] {
            let connection = try await connectToRawPeer()
            defer { connection.close() }
            let socket = connection.socket
            connection.recorder.onRead = { sock, data, tag in
                if tag == 10 {
                    let length = Int(data[data.startIndex + 5]) | Int(data[data.startIndex + 6]) << 8
                    sock.readData(toLength: UInt(length + 1), withTimeout: 5, tag: 11)
                } else {
                    sock.readData(toLength: 7, withTimeout: 5, tag: 10)
                }
            }
            socket.readData(toLength: 7, withTimeout: 5, tag: 10)
            let peer = connection.peer
            try await onThread {
                if byteByByte {
                    for byte in wire { peer.send([byte]) }
                } else {
                    peer.send(wire)
                }
            }
            let events = try await connection.recorder.wait {
                $0.count { if case .read = $0 { true } else { false } } == 100
            }
            #expect(Array(events.readData) == wire)
            let tags = events.compactMap { if case .read(_, let tag) = $0 { tag } else { nil } }
            #expect(tags == Array(repeating: [10, 11], count: 50).flatMap { $0 })
        }
    }
}
