import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import TetherSockets

/// A P-256 key and a self-signed certificate for localhost and 127.0.0.1, made with the openssl CLI.
struct TLSIdentity {
    let certificatePath: String
    let keyPath: String

    static func generate() throws -> TLSIdentity {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-bench-\(getpid())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let identity = TLSIdentity(certificatePath: "\(directory)/cert.pem", keyPath: "\(directory)/key.pem")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", identity.keyPath, "-out", identity.certificatePath, "-days", "1", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ]
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchmarkError(description: "openssl failed") }
        return identity
    }

    func serverContext() throws -> NIOSSLContext {
        try NIOSSLContext(
            configuration: .makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMFile(certificatePath).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(file: keyPath, format: .pem))
            )
        )
    }

    /// Full verification (chain and name) against the certificate itself, as Tether's client does.
    var clientContext: NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .file(certificatePath)
        configuration.minimumTLSVersion = .tlsv12
        return try! NIOSSLContext(configuration: configuration)
    }

    func clientSettings() throws -> TLSSettings {
        var settings = TLSSettings.client(peerName: "localhost")
        settings.trustRoots = .file(certificatePath)
        return settings
    }
}

enum TLSBenchmarks {
    static let group = MultiThreadedEventLoopGroup.singleton

    /// The raw upload behind NIOSSL: ``TLSUploadHandler`` writes on writability; with `refilledFromQueue`,
    /// ``TLSQueueRefillHandler`` takes each next write from a dispatch queue (the floor of queue delivery).
    static func rawUpload(
        port: Int,
        total: Int,
        context: NIOSSLContext,
        refilledFromQueue: Bool = false
    ) async throws {
        let done = group.next().makePromise(of: Void.self)
        _ = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        try NIOSSLClientHandler(context: context, serverHostname: "localhost")
                    )
                    let uploader: any ChannelHandler =
                        refilledFromQueue
                        ? TLSQueueRefillHandler(total: total, done: done)
                        : TLSUploadHandler(total: total, done: done)
                    try channel.pipeline.syncOperations.addHandler(uploader)
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        try await done.futureResult.get()
    }

    static func asyncUpload(port: Int, total: Int, settings: TLSSettings) async throws {
        let connection = try await TCPConnection.connect(host: "127.0.0.1", port: port, tls: settings)
        let chunk = ByteBuffer(repeating: 0x41, count: 65_536)
        var sent = 0
        while sent < total {
            try await connection.write(chunk)
            sent += chunk.readableBytes
        }
        while try await connection.readAvailable() != nil {}
        try await connection.close()
    }

    static func rawHandshake(port: Int, context: NIOSSLContext) async throws {
        let done = group.next().makePromise(of: Void.self)
        _ = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        try NIOSSLClientHandler(context: context, serverHostname: "localhost")
                    )
                    try channel.pipeline.syncOperations.addHandler(HandshakeHandler(done: done))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        try await done.futureResult.get()
    }

    static func asyncHandshake(port: Int, settings: TLSSettings) async throws {
        let connection = try await TCPConnection.connect(host: "127.0.0.1", port: port, tls: settings)
        try await connection.close()
    }
}

/// The raw upload behind NIOSSL: NIOSSL encrypts on flush and the channel's writability only sees encrypted bytes, so
/// each 64 KiB write is flushed (without that, or before the handshake, the whole upload would pile up in NIOSSL's
/// buffer before any back-pressure).
final class TLSUploadHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let total: Int
    let done: EventLoopPromise<Void>
    var sent = 0
    let chunk = ByteBuffer(repeating: 0x41, count: 65_536)

    init(total: Int, done: EventLoopPromise<Void>) {
        self.total = total
        self.done = done
    }

    func channelInactive(context: ChannelHandlerContext) {
        done.succeed()
    }

    // Writes start once the handshake completed: before it NIOSSL buffers every write while the channel stays
    // writable.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent {
            secured = true
            pump(context: context)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) { pump(context: context) }

    private var secured = false

    private func pump(context: ChannelHandlerContext) {
        guard secured else { return }
        while context.channel.isWritable && sent < total {
            sent += chunk.readableBytes
            context.writeAndFlush(wrapOutboundOut(chunk), promise: nil)
        }
    }
}

/// The upload of ``TLSUploadHandler`` with the hops of queue delivery: 16 writes of 64 KiB in flight (as the delegate
/// face's `UploadDriver`), and each completed write asks a serial DispatchQueue for the next one, which copies a
/// `Data` chunk into a ByteBuffer there and hands it back to the event loop.
final class TLSQueueRefillHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let total: Int
    let done: EventLoopPromise<Void>
    let chunk = Data(repeating: 0x41, count: 65_536)
    let queue = DispatchQueue(label: "refill")
    // Touched on the queue only.
    var queued = 0

    init(total: Int, done: EventLoopPromise<Void>) {
        self.total = total
        self.done = done
    }

    func channelInactive(context: ChannelHandlerContext) {
        done.succeed()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case .handshakeCompleted = event as? TLSUserEvent else { return }
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        queue.async {
            for _ in 0..<16 { self.queueNext(loopBound) }
        }
    }

    /// On the queue: copies the next chunk and writes it on the loop; its completion asks for the one after.
    private func queueNext(_ context: NIOLoopBound<ChannelHandlerContext>) {
        guard queued < total else { return }
        queued += chunk.count
        let bytes = ByteBuffer(data: chunk)
        context.eventLoop.execute {
            let promise = context.eventLoop.makePromise(of: Void.self)
            promise.futureResult.whenSuccess { self.queue.async { self.queueNext(context) } }
            context.value.writeAndFlush(self.wrapOutboundOut(bytes), promise: promise)
        }
    }
}

/// Closes the channel once the handshake completed.
final class HandshakeHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let done: EventLoopPromise<Void>

    init(done: EventLoopPromise<Void>) {
        self.done = done
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent {
            context.close(promise: nil)
            done.succeed()
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        done.fail(error)
        context.close(promise: nil)
    }
}

/// Delegate face: connect, `startTLS`, and done at `socketDidSecure`.
final class HandshakeDriver: Driver, @unchecked Sendable {
    let tls: TLSSettings

    init(tls: TLSSettings) {
        self.tls = tls
    }

    override func socket(_ sock: GCDAsyncSocket, didConnectToHost host: String, port: UInt16) {
        sock.startTLS(tls)
    }

    override func socketDidSecure(_ sock: GCDAsyncSocket) {
        finish(.success(()))
        sock.disconnect()
    }
}
