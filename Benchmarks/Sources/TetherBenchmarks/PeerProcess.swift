import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// The peer every client variant talks to: a raw NIO server in a child process (the benchmark binary run with
/// `--peer MODE`), so that the measured process holds only the client side.
enum PeerMode: String {
    case echo
    case discard
    /// Reads `--bytes` bytes from each client, then closes: uploads are timed until the peer has every byte.
    case sink
    /// Sends `--bytes` bytes in 64 KiB buffers to each client, then closes.
    case source
    /// Accepts and holds connections.
    case hold
    /// Sends `--bytes` pipelined STX frames (32-byte payloads) to each client.
    case frames
    /// `sink` behind NIOSSL (`--cert`, `--key`).
    case tlsSink
    /// Completes TLS handshakes (behind NIOSSL) and discards whatever follows.
    case tlsHandshake
    /// UDP: echoes each datagram to its sender.
    case udpEcho
    /// HTTP/1.1 with keep-alive: `GET /small` answers 1 KiB, `GET /big` streams `--bytes` bytes.
    case http
}

final class PeerProcess {
    let process: Process
    let port: Int

    init(mode: PeerMode, bytes: Int = 0, tls: TLSIdentity? = nil) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--peer", mode.rawValue, "--bytes", String(bytes)]
        if let tls { process.arguments! += ["--cert", tls.certificatePath, "--key", tls.keyPath] }
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let line = String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self)
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchmarkError(description: "peer printed \(line)")
        }
        self.port = port
    }

    func stop() {
        // SIGKILL: the child does not always act on SIGTERM here, and waiting for it then never ends.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
}

/// The child-process side.
enum PeerServer {
    static func run(mode: PeerMode, bytes: Int, tls: NIOSSLContext? = nil) throws -> Never {
        let group = MultiThreadedEventLoopGroup.singleton
        if mode == .udpEcho {
            let channel = try DatagramBootstrap(group: group)
                .channelOption(.socketOption(.so_rcvbuf), value: 4 << 20)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(DatagramEchoHandler())
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .wait()
            FileHandle.standardOutput.write(Data("\(channel.localAddress!.port!)\n".utf8))
            try channel.closeFuture.wait()
            exit(0)
        }
        let channel = try ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 4096)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler: any ChannelHandler
                    switch mode {
                    case .echo: handler = EchoHandler()
                    case .discard, .hold: handler = DiscardHandler()
                    case .source: handler = SourceHandler(total: bytes)
                    case .sink: handler = SinkHandler(total: bytes)
                    case .frames: handler = FrameSourceHandler(wire: FramingBenchmarks.wire(count: bytes))
                    case .tlsSink: handler = SinkHandler(total: bytes)
                    case .tlsHandshake, .udpEcho: handler = DiscardHandler()
                    case .http:
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        handler = HTTPPeerHandler(bigBytes: bytes)
                    }
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                    }
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .wait()
        FileHandle.standardOutput.write(Data("\(channel.localAddress!.port!)\n".utf8))
        try channel.closeFuture.wait()
        exit(0)
    }
}

final class EchoHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.write(data, promise: nil)
    }
    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }
}

final class DiscardHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}

final class SourceHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let total: Int
    var sent = 0
    let chunk = ByteBuffer(repeating: 0x5A, count: 65_536)

    init(total: Int) {
        self.total = total
    }

    func channelActive(context: ChannelHandlerContext) {
        pump(context: context)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        pump(context: context)
    }

    private func pump(context: ChannelHandlerContext) {
        while context.channel.isWritable && sent < total {
            let length = min(chunk.readableBytes, total - sent)
            sent += length
            context.write(wrapOutboundOut(chunk.getSlice(at: 0, length: length)!), promise: nil)
        }
        context.flush()
        if sent >= total {
            context.close(mode: .output, promise: nil)
        }
    }
}

final class SinkHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let total: Int
    var received = 0

    init(total: Int) {
        self.total = total
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received += unwrapInboundIn(data).readableBytes
        if received >= total {
            context.close(promise: nil)
        }
    }
}

final class FrameSourceHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    var wire: ByteBuffer

    init(wire: ByteBuffer) {
        self.wire = wire
    }

    func channelActive(context: ChannelHandlerContext) { pump(context: context) }
    func channelWritabilityChanged(context: ChannelHandlerContext) { pump(context: context) }

    private func pump(context: ChannelHandlerContext) {
        while context.channel.isWritable, wire.readableBytes > 0 {
            let slice = wire.readSlice(length: min(65_536, wire.readableBytes))!
            context.write(wrapOutboundOut(slice), promise: nil)
        }
        context.flush()
    }
}
