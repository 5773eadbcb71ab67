import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing
import TetherConcurrency

@testable import TetherSockets

/// A TLS socket closed while its reading is paused for back-pressure (a full buffer, no read waiting): its
/// close_notify goes out, and the peer's answer, which comes behind the bytes the socket never read, is read.
@Suite(.timeLimit(.minutes(1)))
struct GCDAsyncSocketTLSPausedCloseTests {
    /// The peer's side: a NIO TLS server that sends `size` bytes once secure, and answers a close_notify with its own
    /// and leaves the TCP connection open (its end of stream would make NIO read to it, paused or not).
    final class SendingServer: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        let size: Int
        /// Set when the whole write reached the kernel (or failed).
        let written = Latch<Result<Void, any Error>>()

        init(size: Int) {
            self.size = size
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            // NIOTLS's `TLSUserEvent.handshakeCompleted` (by name: this target does not depend on NIOTLS).
            if String(describing: event).hasPrefix("handshakeCompleted") {
                let promise = context.eventLoop.makePromise(of: Void.self)
                let written = written
                promise.futureResult.whenComplete { written.set($0) }
                context.writeAndFlush(
                    wrapOutboundOut(ByteBuffer(repeating: 0x61, count: size)),
                    promise: promise
                )
            } else if case .inputClosed = event as? ChannelEvent {
                try? context.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self).stopTLS(promise: nil)
            }
            context.fireUserInboundEventTriggered(event)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
    }

    @Test func aTLSSocketClosedWhileItsReadingIsPausedReadsThePeersCloseNotify() async throws {
        let certificates = try await TLSTestCertificates.shared()
        // Enough for the engine to pause reading; little enough that what it leaves fits in its kernel's buffer (the
        // server's close_notify must not wait behind its own unsent bytes, which its close would drop).
        let server = SendingServer(size: SocketEngine.pauseThreshold + 64 * 1024)
        let listener = try await startNIOTLSServer(server, allowRemoteHalfClosure: true)
        defer { listener.close(promise: nil) }
        let recorder = SocketRecorder(label: "tls-paused-close")
        let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        try socket.connect(toHost: "127.0.0.1", onPort: UInt16(listener.localAddress!.port!), withTimeout: 10)
        socket.startTLS(try certificates.client())
        try await recorder.wait { $0.contains(.secured) }
        // The server's bytes all left it; the socket read until its buffer was full, and, no read waiting, paused.
        #expect((try? await server.written.wait(timeout: .seconds(20)).get()) != nil)
        let machine = try #require(socket.state.withLock { $0.machine })
        let deadline = ContinuousClock.now + .seconds(20)
        while !machine.withLock({ $0.isReadingPaused }) && ContinuousClock.now < deadline { await Task.yield() }
        #expect(machine.withLock { $0.isReadingPaused })
        let watcher = try await TLSShutdownWatcher.watching(socket)
        socket.disconnect()
        try await recorder.wait { $0.contains { if case .disconnected = $0 { true } else { false } } }
        // The socket's side reads on to the server's close_notify: the shutdown completes, then the channel ends
        // (with reading left paused, NIOSSL's shutdown timer ends the channel first, its close_notify unread).
        #expect(try await watcher.inactive.wait(timeout: .seconds(30)) == true)
    }
}
