import Dispatch
import Foundation
import NIOCore
import TetherCore
import TetherSockets

/// The demo's steps, grouped by capability.
enum DemoSteps {}

struct DemoFailure: Error, CustomStringConvertible {
    var description: String
}

extension DemoSteps {
    /// The seed's framed exchange: a device (server) reads each frame's 7-byte header with tag 10, then its body
    /// and CRC (`len + 1` bytes) with tag 11, and answers with a frame whose destination and source are swapped.
    static func delegateFaceFrames() async throws -> String {
        let codec = STXFrameCodec()
        let device = FrameDevice(codec: codec)
        let listener = GCDAsyncSocket(delegate: device, delegateQueue: device.queue)
        try listener.accept(onInterface: "127.0.0.1", port: 0)
        defer { listener.disconnect() }

        let client = FrameClient(codec: codec, expected: 3)
        let socket = GCDAsyncSocket(delegate: client, delegateQueue: client.queue)
        try socket.connect(toHost: "127.0.0.1", onPort: listener.localPort, withTimeout: 5)
        var wire = ByteBuffer()
        for index in 1...3 {
            let frame = STXFrame(destination: 1, source: 2, bytes: Array("hello #\(index)".utf8))
            try codec.encode(frame, into: &wire)
        }
        // One coalesced write: the "sticky packet" case the tags are there to survive.
        socket.write(Data(wire.readableBytesView), withTimeout: 5, tag: 1)
        socket.readData(toLength: UInt(STXFrameCodec.headerLength), withTimeout: 5, tag: FrameClient.headerTag)
        let replies = try await client.replies()
        socket.disconnect()
        let first = replies[0]
        return
            "\(replies.count) frames echoed, e.g. dest=\(first.destination) src=\(first.source) "
            + "\"\(String(buffer: first.payload))\", CRC checked"
    }

    /// The async face with a codec: a device answers each STX frame; the client iterates `frames(STXFrameCodec())`.
    static func asyncFaceFrames() async throws -> String {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let device = Task {
            for try await connection in listener.connections {
                for try await frame in connection.frames(STXFrameCodec()) {
                    let reply = STXFrame(destination: frame.source, source: frame.destination, payload: frame.payload)
                    try await connection.write(reply, using: STXFrameCodec())
                }
                try await connection.close()
            }
        }
        defer { device.cancel() }
        let client = try await TCPConnection.connect(host: "127.0.0.1", port: listener.localPort)
        for index in 1...3 {
            let frame = STXFrame(destination: 5, source: 1, bytes: Array("reading #\(index)".utf8))
            try await client.write(frame, using: STXFrameCodec())
        }
        var replies: [STXFrame] = []
        for try await reply in client.frames(STXFrameCodec()) {
            replies.append(reply)
            if replies.count == 3 { break }
        }
        try await client.close()
        try await listener.close()
        return
            "\(replies.count) frames round-tripped, last dest=\(replies[2].destination) \"\(String(buffer: replies[2].payload))\""
    }

    /// The async face: a listener task echoes; a client writes and reads back with typed reads.
    static func asyncFaceEcho() async throws -> String {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let server = Task {
            for try await connection in listener.connections {
                while let chunk = try await connection.readAvailable() { try await connection.write(chunk) }
                try await connection.close()
            }
        }
        defer { server.cancel() }
        let port = listener.localPort
        let client = try await TCPConnection.connect(host: "localhost", port: port)
        try await client.write(ByteBuffer(string: "PING 1\r\nPING 2\r\n"))
        let first = try await client.read(upTo: [0x0D, 0x0A], timeout: .seconds(5))
        let second = try await client.read(upTo: [0x0D, 0x0A], timeout: .seconds(5))
        try await client.close()
        try await listener.close()
        let lines = [first, second].map { String(buffer: $0).trimmingCharacters(in: .newlines) }
        return "echoed \(lines.joined(separator: ", ")) via localhost:\(port)"
    }
}

/// The seed's device side, on the delegate face.
// Sendable: its vars are touched only in delegate callbacks, which all run on `queue`; the rest never changes.
final class FrameDevice: GCDAsyncSocketDelegate, @unchecked Sendable {
    let queue = DispatchQueue(label: "demo.device")
    let codec: STXFrameCodec
    private var children: [GCDAsyncSocket] = []
    private var header: [UInt8] = []

    init(codec: STXFrameCodec) {
        self.codec = codec
    }

    func socket(_ sock: GCDAsyncSocket, didAcceptNewSocket newSocket: GCDAsyncSocket) {
        children.append(newSocket)
        newSocket.readData(toLength: UInt(STXFrameCodec.headerLength), withTimeout: 5, tag: FrameClient.headerTag)
    }

    func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        if tag == FrameClient.headerTag {
            header = Array(data)
            let length = Int(header[5]) | Int(header[6]) << 8
            sock.readData(toLength: UInt(length + 1), withTimeout: 5, tag: FrameClient.bodyTag)
            return
        }
        var buffer = ByteBuffer(bytes: header + Array(data))
        var decoder = codec
        guard case .frame(let frame)? = try? decoder.decode(from: &buffer) else {
            sock.disconnect()
            return
        }
        let reply = STXFrame(destination: frame.source, source: frame.destination, payload: frame.payload)
        if let bytes = try? codec.encode(reply) {
            sock.write(Data(bytes.readableBytesView), withTimeout: 5, tag: 2)
        }
        sock.readData(toLength: UInt(STXFrameCodec.headerLength), withTimeout: 5, tag: FrameClient.headerTag)
    }
}

/// The seed's app side: header with tag 10, body with tag 11, frames verified by the codec.
// Sendable: its vars are touched only on `queue` (delegate callbacks and `replies()`'s block); the rest never changes.
final class FrameClient: GCDAsyncSocketDelegate, @unchecked Sendable {
    static let headerTag = 10
    static let bodyTag = 11
    let queue = DispatchQueue(label: "demo.client")
    let codec: STXFrameCodec
    let expected: Int
    private var header: [UInt8] = []
    private var received: [STXFrame] = []
    private var continuation: CheckedContinuation<[STXFrame], any Error>?
    private var outcome: Result<[STXFrame], any Error>?

    init(codec: STXFrameCodec, expected: Int) {
        self.codec = codec
        self.expected = expected
    }

    func replies() async throws -> [STXFrame] {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                if let outcome = self.outcome {
                    continuation.resume(with: outcome)
                } else {
                    self.continuation = continuation
                }
            }
        }
    }

    private func finish(_ result: Result<[STXFrame], any Error>) {
        guard outcome == nil else { return }
        outcome = result
        continuation?.resume(with: result)
        continuation = nil
    }

    func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        if tag == Self.headerTag {
            header = Array(data)
            let length = Int(header[5]) | Int(header[6]) << 8
            sock.readData(toLength: UInt(length + 1), withTimeout: 5, tag: Self.bodyTag)
            return
        }
        var buffer = ByteBuffer(bytes: header + Array(data))
        var decoder = codec
        do {
            guard case .frame(let frame) = try decoder.decode(from: &buffer) else {
                throw DemoFailure(description: "incomplete frame")
            }
            received.append(frame)
        } catch {
            finish(.failure(error))
            return
        }
        if received.count == expected {
            finish(.success(received))
        } else {
            sock.readData(toLength: UInt(STXFrameCodec.headerLength), withTimeout: 5, tag: Self.headerTag)
        }
    }

    func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {
        finish(.failure(err ?? DemoFailure(description: "disconnected before all replies arrived")))
    }
}
