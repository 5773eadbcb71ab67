import ArgumentParser
import Dispatch
import Foundation
import NIOCore
import TetherCore
import TetherSockets

/// `stx-relay device`: the GCD-era face, reading each frame as the seed did, header then body.
struct Device: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Register with the relay, send, print what arrives.")

    @Option(help: "The relay's address.")
    var host = "127.0.0.1"

    @Option(help: "The relay's port.")
    var port: UInt16

    @Option(help: "This device's id (1...65535; 0 is the relay).")
    var id: UInt16

    @Option(help: "Once registered, send --message to this device.")
    var to: UInt16?

    @Option(help: "The text to send to --to.")
    var message: String?

    @Option(help: "Exit after receiving this many frames (0: once the sent frame is written).")
    var count: Int?

    func validate() throws {
        guard port != 0 else { throw ValidationError("--port must be within 1...65535.") }
        guard id != relayAddress else { throw ValidationError("--id 0 is the relay's.") }
        guard (to == nil) == (message == nil) else { throw ValidationError("--to and --message go together.") }
        guard to != relayAddress else { throw ValidationError("--to 0 is the relay.") }
        guard (message?.utf8.count ?? 0) <= 65_535 else { throw ValidationError("--message is over 65,535 bytes.") }
        guard count.map({ $0 >= 0 }) ?? true else { throw ValidationError("--count must not be negative.") }
        guard count != 0 || to != nil else { throw ValidationError("--count 0 needs --to and --message.") }
    }

    func run() throws {
        let outgoing = to.map { STXFrame(destination: $0, source: id, bytes: Array(message!.utf8)) }
        let device = FrameDevice(id: id, outgoing: outgoing, count: count)
        do {
            try device.run(host: host, port: port)
        } catch {
            printError("error: \(error.localizedDescription)")
            throw ExitCode.failure
        }
    }
}

/// The seed's framed reads on `GCDAsyncSocket`: tag 10 reads the header, tag 11 the data and CRC.
final class FrameDevice: GCDAsyncSocketDelegate {
    static let headerTag = 10
    static let bodyTag = 11
    static let sendTag = 20

    let id: UInt16
    let outgoing: STXFrame?
    let count: Int?
    private let codec = STXFrameCodec()
    private let queue = DispatchQueue(label: "stx-relay.device")
    private let socket = GCDAsyncSocket()
    private let done = DispatchSemaphore(value: 0)
    // Touched on `queue` only (delegate callbacks), and read after `done` is signalled.
    private var header: [UInt8] = []
    private var received = 0
    private var failure: (any Error)?

    init(id: UInt16, outgoing: STXFrame?, count: Int?) {
        self.id = id
        self.outgoing = outgoing
        self.count = count
    }

    /// Connects, registers, and returns when the connection ends: normally after `count` frames, else by an error.
    func run(host: String, port: UInt16) throws {
        socket.setDelegate(self, delegateQueue: queue)
        try socket.connect(toHost: host, onPort: port, withTimeout: 5)
        // Queued behind the connect: register, then wait for the first header.
        write(STXFrame(destination: relayAddress, source: id, bytes: []), tag: 0)
        socket.readData(toLength: UInt(STXFrameCodec.headerLength), withTimeout: -1, tag: Self.headerTag)
        done.wait()
        if let failure { throw failure }
    }

    private func write(_ frame: STXFrame, tag: Int) {
        let bytes = try! codec.encode(frame)  // throws only for a payload over 65,535 bytes (see `validate`)
        socket.write(Data(bytes.readableBytesView), withTimeout: 5, tag: tag)
    }

    func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        if tag == Self.headerTag {
            // 02 | dest | src | len, the fields little-endian: the seed's OSReadLittleInt16(bytes, 5).
            header = [UInt8](data)
            let length = UInt(header[5]) | UInt(header[6]) << 8
            sock.readData(toLength: length + 1, withTimeout: 5, tag: Self.bodyTag)
            return
        }
        // The codec checks the start byte and the CRC-8 the seed never checked.
        var buffer = ByteBuffer(bytes: header + [UInt8](data))
        var decoder = codec
        do {
            guard case .frame(let frame) = try decoder.decode(from: &buffer) else { return sock.disconnect() }
            guard handle(frame, on: sock) else { return }
        } catch {
            failure = DeviceFailure(errorDescription: "a bad frame from the relay: \(error)")
            return sock.disconnect()
        }
        sock.readData(toLength: UInt(STXFrameCodec.headerLength), withTimeout: -1, tag: Self.headerTag)
    }

    /// Answers the relay's registration or prints a device's frame; false once the device is done.
    private func handle(_ frame: STXFrame, on sock: GCDAsyncSocket) -> Bool {
        if frame.source == relayAddress, String(buffer: frame.payload) == registeredPayload {
            printLine("registered as \(id)")
            if let outgoing { write(outgoing, tag: Self.sendTag) }
            guard count == 0 else { return true }
            sock.disconnectAfterWriting()  // once the frame is written, socketDidDisconnect follows with nil
            return false
        }
        printLine("frame src=\(frame.source) dest=\(frame.destination): \(String(buffer: frame.payload))")
        received += 1
        guard received == count else { return true }
        sock.disconnect()
        return false
    }

    func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {
        // nil after our own disconnect; the relay's close or a timeout arrive as a GCDAsyncSocketError.
        if failure == nil { failure = err }
        done.signal()
    }
}

struct DeviceFailure: LocalizedError {
    var errorDescription: String?
}
