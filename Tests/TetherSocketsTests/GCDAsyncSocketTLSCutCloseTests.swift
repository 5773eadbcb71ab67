import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing
import TetherConcurrency

@testable import TetherSockets

/// A TLS socket disconnected at once while its peer takes none of its bytes: its delegate hears of the disconnect at
/// once, but its close_notify waits behind the bytes already handed to the channel; NIOSSL gives up waiting for the
/// peer's after its 5-s shutdown timeout and closes the channel, and what the channel still held, close_notify
/// included, is dropped. The peer sees the stream end without close_notify: the signal of a stream
/// cut short, which it was. (The simulation's TLS check allows this end only where bytes were lost so.)
@Suite(.timeLimit(.minutes(1)))
struct GCDAsyncSocketTLSCutCloseTests {
    /// The peer's side: a NIO TLS server that reads nothing until told to, then records the bytes and how the
    /// stream ended.
    final class SilentServer: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer

        let channel = Latch<any Channel>()
        /// How the stream ended: "unclean shutdown" (no close_notify), "close_notify", or another error.
        let ended = Latch<String>()
        let received = LockedBox(0)

        func handlerAdded(context: ChannelHandlerContext) {
            channel.set(context.channel)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = unwrapInboundIn(data).readableBytes
            received.withLock { $0 += bytes }
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            // NIOTLS's `TLSUserEvent.shutdownCompleted` (by name: this target does not depend on NIOTLS).
            if String(describing: event) == "shutdownCompleted" { ended.set("close_notify") }
            context.fireUserInboundEventTriggered(event)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            if let error = error as? NIOSSLError, case .uncleanShutdown = error {
                ended.set("unclean shutdown")
            } else {
                ended.set("error: \(error)")
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            ended.set("inactive, nothing seen")
            context.fireChannelInactive()
        }
    }

    @Test func aTLSSocketDisconnectedWhileItsPeerTakesNothingEndsTheStreamWithoutCloseNotify() async throws {
        let certificates = try await TLSTestCertificates.shared()
        let server = SilentServer()
        let listener = try await startNIOTLSServer(server)
        defer { listener.close(promise: nil) }
        let recorder = SocketRecorder(label: "tls-cut-close")
        let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        try socket.connect(toHost: "127.0.0.1", onPort: UInt16(listener.localAddress!.port!), withTimeout: 10)
        socket.startTLS(try certificates.client())
        try await recorder.wait { $0.contains(.secured) }
        // From here the server reads nothing: far more than the two kernels' buffers hold stays in the socket's.
        let peerChannel = try await server.channel.wait()
        try await peerChannel.setOption(ChannelOptions.autoRead, value: false).get()
        let watcher = try await TLSShutdownWatcher.watching(socket)
        let size = 64 * 1024 * 1024
        socket.write(Data(count: size), withTimeout: -1, tag: 1)
        socket.disconnect()
        _ = try await recorder.waitForDisconnect(timeout: .seconds(30))
        // The delegate hears of the disconnect at once; the channel goes on to close TLS, and ends when NIOSSL's wait
        // for the server's close_notify runs out, its shutdown incomplete.
        #expect(try await watcher.inactive.wait(timeout: .seconds(30)) == false)
        // The server reads what reached its kernel, then the end.
        try await peerChannel.setOption(ChannelOptions.autoRead, value: true).get()
        peerChannel.read()
        #expect(try await server.ended.wait(timeout: .seconds(30)) == "unclean shutdown")
        let received = server.received.withLock { $0 }
        #expect(received < size)
    }
}
