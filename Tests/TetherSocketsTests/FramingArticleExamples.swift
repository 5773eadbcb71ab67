import Dispatch
import Foundation
import NIOCore
import Testing
import TetherCore
import TetherSockets
import TetherTestSupport

// The code of the article "Framing a binary protocol" (TetherSockets.docc/FramingABinaryProtocol.md). Each Swift
// block of the article appears here line for line (`everySwiftBlockOfTheArticleIsCodeOfThisFile` checks it); the
// tests below run them against sockets on loopback.

// MARK: - The frame

func theSeedsChecksum() -> UInt8 {
    let headerAndPayload: [UInt8] = [0x02, 0x01, 0x00, 0x02, 0x00, 0x02, 0x00, 0x68, 0x69]
    return CRC8.smbus.checksum(headerAndPayload)  // 0xDA, the frame's last byte
}

// MARK: - Building frames

func buildCommand(to device: UInt16, from host: UInt16, command: String) throws -> ByteBuffer {
    let codec = STXFrameCodec(maxPayloadLength: 1024)
    let frame = STXFrame(destination: device, source: host, bytes: command.utf8)
    return try codec.encode(frame)  // FramingError.frameTooLarge over 1024 bytes; nothing is encoded
}

// MARK: - Reading with tags on GCDAsyncSocket

enum STXReadTag {
    static let header = 10  // TAG_FIXED_LENGTH_HEADER
    static let body = 11  // TAG_RESPONSE_BODY
}

final class STXDeviceClient: GCDAsyncSocketDelegate {
    let socket = GCDAsyncSocket()
    let onFrame: @Sendable (STXFrame) -> Void
    let onBadFrame: @Sendable (any Error) -> Void
    private var header = Data()  // touched on the delegate queue only

    init(onFrame: @escaping @Sendable (STXFrame) -> Void, onBadFrame: @escaping @Sendable (any Error) -> Void) {
        self.onFrame = onFrame
        self.onBadFrame = onBadFrame
    }

    func start(host: String, port: UInt16) throws {
        socket.setDelegate(self, delegateQueue: DispatchQueue(label: "stx-device-client"))
        try socket.connect(toHost: host, onPort: port, withTimeout: 5)
    }

    func send(_ frame: STXFrame) throws {
        let wire = try STXFrameCodec().encode(frame)
        socket.write(Data(wire.readableBytesView), withTimeout: 5, tag: 0)
    }

    func socket(_ sock: GCDAsyncSocket, didConnectToHost host: String, port: UInt16) {
        sock.readData(toLength: UInt(STXFrameCodec.headerLength), withTimeout: -1, tag: STXReadTag.header)
    }

    func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        switch tag {
        case STXReadTag.header:
            // len + 1 (data | CRC), from OSReadLittleInt16(bytes, 5), once the start byte and the limit are checked
            guard let body = try? STXFrameCodec().bodyLength(forHeader: data) else {
                sock.disconnect()  // out of step: the length after a wrong start byte means nothing
                return
            }
            header = data
            sock.readData(toLength: UInt(body), withTimeout: 5, tag: STXReadTag.body)
        default:
            var codec = STXFrameCodec()
            var frame = ByteBuffer(bytes: header + data)
            do {
                if case .frame(let decoded) = try codec.decode(from: &frame) { onFrame(decoded) }
            } catch {
                onBadFrame(error)  // FramingError.checksumMismatch; the next frame is read all the same
            }
            sock.readData(toLength: UInt(STXFrameCodec.headerLength), withTimeout: -1, tag: STXReadTag.header)
        }
    }
}

// MARK: - Reading frames on TCPConnection

func askDevice(port: Int, command: String) async throws -> STXFrame? {
    let codec = STXFrameCodec(maxPayloadLength: 1024)
    let connection = try await TCPConnection.connect(host: "127.0.0.1", port: port)
    let reply: STXFrame?
    do {
        try await connection.write(STXFrame(destination: 1, source: 100, bytes: command.utf8), using: codec)
        var frames = connection.frames(codec).makeAsyncIterator()
        reply = try await frames.next()  // nil: the device closed the connection between frames
    } catch {
        try? await connection.close()
        throw error
    }
    try await connection.close()
    return reply
}

// MARK: - A server that routes by destination

actor STXRouter {
    static let address: UInt16 = 0
    private var devices: [UInt16: TCPConnection] = [:]

    nonisolated func serve(_ listener: TCPListener) async throws {
        try await withThrowingDiscardingTaskGroup { group in
            for try await connection in listener.connections {
                group.addTask { await self.serve(connection) }
            }
        }
    }

    nonisolated func serve(_ connection: TCPConnection) async {
        let codec = STXFrameCodec(maxPayloadLength: 1024, resynchronization: .skipToNextStartByte)
        var frames = connection.frames(codec).makeAsyncIterator()
        var announced: UInt16?
        do {
            while let frame = try await frames.next() {
                if frame.destination == Self.address {
                    announced = frame.source
                    await register(connection, as: frame.source)
                    let ok = STXFrame(destination: frame.source, source: Self.address, bytes: "ok".utf8)
                    try await connection.write(ok, using: codec)
                } else if let device = await device(at: frame.destination) {
                    try await device.write(frame, using: codec)  // unknown destinations are dropped
                }
            }
        } catch {
            // The connection failed, or a frame to forward could not be written: drop this device.
        }
        if let announced { await unregister(connection, from: announced) }
        try? await connection.close()
    }

    private func register(_ connection: TCPConnection, as address: UInt16) {
        devices[address] = connection
    }

    private func unregister(_ connection: TCPConnection, from address: UInt16) {
        if devices[address] === connection { devices[address] = nil }
    }

    private func device(at address: UInt16) -> TCPConnection? {
        devices[address]
    }
}

func startRouter() async throws -> (port: Int, task: Task<Void, any Error>) {
    let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
    let router = STXRouter()
    let task = Task { try await router.serve(listener) }
    return (listener.localPort, task)
}

// MARK: - Bad checksums and garbage

func readReportingCorruption(_ connection: TCPConnection) async throws -> (frames: [STXFrame], dropped: Int) {
    var received: [STXFrame] = []
    do {
        for try await frame in connection.frames(STXFrameCodec()) {
            received.append(frame)
        }
        return (received, 0)
    } catch FramingError.Code.checksumMismatch {
        let bad = try await connection.readAvailable()  // the damaged frame and what followed it
        return (received, bad?.readableBytes ?? 0)
    }
}

// MARK: - Test support

/// The wire bytes of `frames` with the default STX codec.
private func wire(_ frames: STXFrame...) throws -> [UInt8] {
    var buffer = ByteBuffer()
    for frame in frames { try STXFrameCodec().encode(frame, into: &buffer) }
    return Array(buffer.readableBytesView)
}

/// The wire bytes of `frame` with its CRC byte inverted.
private func damaged(_ frame: STXFrame) throws -> [UInt8] {
    var bytes = try wire(frame)
    bytes[bytes.count - 1] ^= 0xFF
    return bytes
}

/// A device on the async face: answers each frame with its payload uppercased and the addresses swapped.
private func startUppercasingDevice() async throws -> TCPListener {
    let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
    Task {
        for try await connection in listener.connections {
            let codec = STXFrameCodec()
            for try await frame in connection.frames(codec) {
                let text = String(buffer: frame.payload).uppercased()
                let reply = STXFrame(destination: frame.source, source: frame.destination, bytes: text.utf8)
                try await connection.write(reply, using: codec)
            }
            try await connection.close()
        }
    }
    return listener
}

/// A device connected to the router, announced as `address` (it waits for the router's "ok").
private func connectDevice(_ address: UInt16, routerPort: Int) async throws -> TCPConnection {
    let connection = try await TCPConnection.connect(host: "127.0.0.1", port: routerPort)
    let announce = STXFrame(destination: STXRouter.address, source: address, bytes: [])
    try await connection.write(announce, using: STXFrameCodec())
    var frames = connection.frames(STXFrameCodec()).makeAsyncIterator()
    let ok = try await frames.next()
    #expect(ok == STXFrame(destination: address, source: STXRouter.address, bytes: "ok".utf8))
    return connection
}

/// An async-face connection to a raw peer on loopback.
private func connectToRaw() async throws -> (TCPConnection, RawPeer, RawListener) {
    let listener = try RawListener()
    async let accepted = onThread { listener.accept() }
    let connection = try await TCPConnection.connect(host: "127.0.0.1", port: Int(listener.port), timeout: .seconds(5))
    return (connection, try await accepted, listener)
}

// MARK: - Tests

@Suite("The article \"Framing a binary protocol\": its code compiles and runs", .timeLimit(.minutes(2)))
struct FramingArticleExamples {
    @Test("every Swift block of the article is code of this file, line for line")
    func everySwiftBlockOfTheArticleIsCodeOfThisFile() throws {
        let article = "Sources/TetherSockets/TetherSockets.docc/FramingABinaryProtocol.md"
        #expect(try ArticleSnippets.checkedBlocks(ofArticle: article).count == 7)
        let missing = try ArticleSnippets.blocksMissing(
            fromArticle: article,
            inFiles: ["Tests/TetherSocketsTests/FramingArticleExamples.swift"]
        )
        #expect(missing.isEmpty, "not in FramingArticleExamples.swift:\n\(missing.joined(separator: "\n---\n"))")
    }

    @Test("the seed's frame's CRC-8 is 0xDA, and a command over the maximum is refused")
    func checksumAndBuilding() throws {
        #expect(theSeedsChecksum() == 0xDA)
        let command = try buildCommand(to: 1, from: 2, command: "hi")
        #expect(Array(command.readableBytesView) == [0x02, 0x01, 0x00, 0x02, 0x00, 0x02, 0x00, 0x68, 0x69, 0xDA])
        let error = try #require(throws: FramingError.self) {
            try buildCommand(to: 1, from: 2, command: String(repeating: "x", count: 1025))
        }
        #expect(error.code == .frameTooLarge)
    }

    @Test("the tag reader delivers good frames, reports a bad CRC and goes on, and closes on a wrong start byte")
    func tagReaderOnGCDAsyncSocket() async throws {
        let listener = try RawListener()
        defer { listener.close() }
        let frames = Handoff<STXFrame>()
        let errors = Handoff<FramingError.Code>()
        let client = STXDeviceClient(onFrame: frames.put) { error in
            errors.put((error as? FramingError)?.code ?? FramingError.Code(rawValue: 0))
        }
        try client.start(host: "127.0.0.1", port: listener.port)
        let peer = try await onThread { listener.accept() }
        defer { peer.close() }

        let first = STXFrame(destination: 100, source: 1, bytes: "first".utf8)
        let third = STXFrame(destination: 100, source: 1, bytes: "third".utf8)
        let second = STXFrame(destination: 100, source: 1, bytes: "second".utf8)
        let stream = try wire(first) + damaged(second) + wire(third)
        peer.send(Array(stream[..<4]))  // split inside the first header
        peer.send(Array(stream[4...]))
        #expect(try await frames.next() == first)
        #expect(try await errors.next() == .checksumMismatch)
        #expect(try await frames.next() == third)

        try client.send(STXFrame(destination: 1, source: 100, bytes: "ack".utf8))
        let ack = try wire(STXFrame(destination: 1, source: 100, bytes: "ack".utf8))
        #expect(try await onThread { peer.receive(count: ack.count) } == ack)

        peer.send([0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47])  // a header that is not one
        #expect(try await onThread { peer.receiveToEnd() }.isEmpty)  // the client closed the connection
        withExtendedLifetime(client) {}
    }

    @Test("askDevice writes a frame and returns the device's reply")
    func askDeviceOnTheAsyncFace() async throws {
        let device = try await startUppercasingDevice()
        let reply = try await askDevice(port: device.localPort, command: "status?")
        #expect(reply == STXFrame(destination: 100, source: 1, bytes: "STATUS?".utf8))
        try await device.close()
    }

    @Test("the router forwards by destination, drops unknown ones, and resynchronises past garbage and a bad CRC")
    func routerForwardsByDestination() async throws {
        let (port, task) = try await startRouter()
        defer { task.cancel() }
        let one = try await connectDevice(1, routerPort: port)
        let two = try await connectDevice(2, routerPort: port)
        var atTwo = two.frames(STXFrameCodec()).makeAsyncIterator()

        let hello = STXFrame(destination: 2, source: 1, bytes: "hello".utf8)
        try await one.write(hello, using: STXFrameCodec())
        #expect(try await atTwo.next() == hello)

        // To nobody (dropped), garbage, a damaged frame for 2: only the frame after them arrives.
        let after = STXFrame(destination: 2, source: 1, bytes: "after".utf8)
        let noise: [UInt8] = [0xFF, 0x00, 0x41]
        let lost = try damaged(STXFrame(destination: 2, source: 1, bytes: "bad".utf8))
        let toNobody = try wire(STXFrame(destination: 9, source: 1, bytes: "nobody".utf8))
        try await one.write(contentsOf: toNobody + noise + lost + wire(after))
        #expect(try await atTwo.next() == after)

        try await one.close()
        try await two.close()
    }

    @Test("with the default policy a bad CRC ends the loop and the damaged frame is still buffered")
    func corruptionIsReportedAndTheBytesStay() async throws {
        let (connection, peer, listener) = try await connectToRaw()
        defer {
            peer.close()
            listener.close()
        }
        let good = STXFrame(destination: 1, source: 2, bytes: "ok".utf8)
        let bad = try damaged(STXFrame(destination: 1, source: 2, bytes: "bad".utf8))
        peer.send(try wire(good, good) + bad)
        let (frames, dropped) = try await readReportingCorruption(connection)
        #expect(frames == [good, good])
        #expect(dropped == bad.count)
        try await connection.close()
    }

    @Test("with the default policy garbage throws badStartByte and stays buffered; skipping counts it")
    func garbageWithEachPolicy() async throws {
        let (connection, peer, listener) = try await connectToRaw()
        defer {
            peer.close()
            listener.close()
        }
        let frame = STXFrame(destination: 1, source: 3, bytes: "x".utf8)
        peer.send([0x41, 0x42, 0x43] + (try wire(frame)))
        var failing = connection.frames(STXFrameCodec()).makeAsyncIterator()
        let error = await #expect(throws: FramingError.self) { try await failing.next() }
        #expect(error?.code == .badStartByte)
        var skipping = connection.frames(STXFrameCodec(resynchronization: .skipToNextStartByte)).makeAsyncIterator()
        #expect(try await skipping.next() == frame)
        #expect(skipping.codec.discardedByteCount == 3)
        try await connection.close()
    }
}
