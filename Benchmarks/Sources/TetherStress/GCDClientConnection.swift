import Dispatch
import Foundation
import NIOCore
import TetherCore
import TetherSockets

/// One TCP client on the delegate face (`GCDAsyncSocket`): connects (and secures, with TLS), reports ready, then on
/// `start()` runs a ping-pong of STX frames (one in flight; tag 10 reads the header, tag 11 the rest) until the run
/// stops. With `framesPerLife` it closes after that many frames and connects again (the soak's churn). Every read
/// and write has a 30 s timeout. All state is touched on `queue` only.
final class GCDClientConnection: GCDAsyncSocketDelegate, @unchecked Sendable {
    static let headerTag = 10
    static let bodyTag = 11
    static let timeout: TimeInterval = 30

    let id: UInt32
    let port: UInt16
    let tls: TLSSettings?
    let control: RunControl
    let queue: DispatchQueue
    let framesPerLife: Int?
    private var socket: GCDAsyncSocket?
    private var tally = SequenceTally()
    private var sent = 0
    private var header = Data()
    private var running = false
    private var ended = false
    /// Called once per life on `queue` when connected and secure (true) or when that failed (false).
    private var onReady: ((Bool) -> Void)?
    /// Called once when the connection stops for good.
    private var onEnd: (() -> Void)?

    init(id: UInt32, port: Int, tls: TLSSettings?, control: RunControl, queue: DispatchQueue, framesPerLife: Int?) {
        self.id = id
        self.port = UInt16(port)
        self.tls = tls
        self.control = control
        self.queue = queue
        self.framesPerLife = framesPerLife
    }

    /// Starts connecting; `ready` and `end` run on the connection's queue.
    func connect(ready: @escaping @Sendable (Bool) -> Void, end: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            onReady = ready
            onEnd = end
            openSocket()
        }
    }

    private func openSocket() {
        let socket = GCDAsyncSocket(delegate: self, delegateQueue: queue)
        self.socket = socket
        do {
            try socket.connect(toHost: "127.0.0.1", onPort: port, withTimeout: Self.timeout)
        } catch {
            control.connectFailed("\(error)")
            self.socket = nil
            reportReady(false)
        }
    }

    private func reportReady(_ ok: Bool) {
        let ready = onReady
        onReady = nil
        ready?(ok)
        if !ok { endForGood() }
    }

    private func endForGood() {
        guard !ended else { return }
        ended = true
        let end = onEnd
        onEnd = nil
        end?()
    }

    /// Begins the exchange (after every connection of the batch is ready).
    func start() {
        queue.async { [self] in
            guard !ended else { return }
            running = true
            sendNext()
        }
    }

    /// Closes the socket now (the run's deadline passed).
    func forceClose() {
        queue.async { [self] in socket?.disconnect() }
    }

    func socket(_ sock: GCDAsyncSocket, didConnectToHost host: String, port: UInt16) {
        if let tls {
            sock.startTLS(tls)
        } else {
            becameReady()
        }
    }

    func socketDidSecure(_ sock: GCDAsyncSocket) {
        becameReady()
    }

    private func becameReady() {
        if onReady != nil {
            reportReady(true)
        } else if running {
            sendNext()
        }
    }

    private func sendNext() {
        guard let socket else { return }
        if control.isStopped || framesPerLife.map({ sent >= $0 }) == true {
            endLife(socket, error: nil)
            return
        }
        let frame = StressFrame.encoded(connection: id, sequence: UInt64(sent), sentAt: ProcessProbe.nanoseconds())
        socket.write(Data(frame.readableBytesView), withTimeout: Self.timeout, tag: 0)
        sent += 1
        socket.readData(toLength: 7, withTimeout: Self.timeout, tag: Self.headerTag)
    }

    func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        if tag == Self.headerTag {
            header = data
            let length = Int(data[data.startIndex + 5]) | Int(data[data.startIndex + 6]) << 8
            sock.readData(toLength: UInt(length + 1), withTimeout: Self.timeout, tag: Self.bodyTag)
            return
        }
        var codec = StressFrame.codec
        var buffer = ByteBuffer()
        buffer.writeBytes(header)
        buffer.writeBytes(data)
        do {
            guard case .frame(let frame) = try codec.decode(from: &buffer),
                let checked = StressFrame.check(frame, connection: id)
            else {
                tally.corrupted += 1
                sendNext()
                return
            }
            tally.record(checked.sequence)
            control.histogram.record(ProcessProbe.nanoseconds() &- checked.sentAt, shard: Int(id))
            sendNext()
        } catch {
            tally.corrupted += 1
            endLife(sock, error: "\(error)")
        }
    }

    /// Accounts for this life; closes the socket. With churn and no stop, the next life's socket connects at once.
    private func endLife(_ sock: GCDAsyncSocket, error: String?) {
        control.finish(sent: sent, tally: tally, error: error)
        tally = SequenceTally()
        sent = 0
        socket = nil
        sock.setDelegate(nil, delegateQueue: nil)
        sock.disconnect()
        if framesPerLife != nil && !control.isStopped && error == nil {
            openSocket()
        } else {
            endForGood()
        }
    }

    func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {
        guard sock === socket else { return }
        let message = err.map { "\($0)" } ?? "disconnected"
        if onReady != nil {
            control.connectFailed(message)
            socket = nil
            reportReady(false)
            return
        }
        if running {
            endLife(sock, error: message)
        } else {
            control.finish(sent: 0, tally: tally, error: message)
            socket = nil
            endForGood()
        }
    }
}
