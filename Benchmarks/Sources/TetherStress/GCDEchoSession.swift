import Foundation
import NIOCore
import TetherCore
import TetherSockets

/// One accepted connection of ``GCDEchoServer``: tag 10 reads the 7-byte STX header, tag 11 the payload and CRC;
/// the whole frame is decoded by `STXFrameCodec` (which checks the CRC), encoded again and written back.
final class GCDEchoSession: GCDAsyncSocketDelegate, @unchecked Sendable {
    static let headerTag = 10
    static let bodyTag = 11
    private weak var server: GCDEchoServer?
    private var header = Data()
    private let counters: ServerCounters

    init(server: GCDEchoServer) {
        self.server = server
        self.counters = server.counters
    }

    func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        if tag == Self.headerTag {
            header = data
            let length = Int(data[data.startIndex + 5]) | Int(data[data.startIndex + 6]) << 8
            sock.readData(toLength: UInt(length + 1), withTimeout: -1, tag: Self.bodyTag)
            return
        }
        var codec = StressFrame.codec
        var buffer = ByteBuffer()
        buffer.writeBytes(header)
        buffer.writeBytes(data)
        do {
            guard case .frame(let frame) = try codec.decode(from: &buffer) else {
                throw StressError("incomplete frame")
            }
            var out = ByteBuffer()
            try StressFrame.codec.encode(frame, into: &out)
            sock.write(Data(out.readableBytesView), withTimeout: -1, tag: 0)
            counters.add("frames")
            sock.readData(toLength: 7, withTimeout: -1, tag: Self.headerTag)
        } catch {
            counters.add("corrupted")
            sock.disconnect()
        }
    }

    func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {
        if let err, (err as? GCDAsyncSocketError)?.code != .closed { counters.add("errors") }
        counters.add("closed")
        server?.ended(sock)
    }
}
