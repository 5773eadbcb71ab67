import NIOCore
import NIOHTTP1

/// The HTTP/1.1 peer (`--peer http --bytes N`), behind NIO's server pipeline: keep-alive, `GET /small` answers 1 KiB,
/// `GET /big` streams N bytes with a Content-Length, in 64 KiB slices of one buffer, as the socket drains.
final class HTTPPeerHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    static let small = ByteBuffer(repeating: 0x61, count: 1024)
    let bigBytes: Int
    let chunk = ByteBuffer(repeating: 0x5A, count: 65_536)
    var path = ""
    var keepAlive = true
    /// Bytes of `/big` still to send, nil when no big response is in flight.
    var bigRemaining: Int?

    init(bigBytes: Int) {
        self.bigBytes = bigBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            path = head.uri
            keepAlive = head.isKeepAlive
        case .body:
            break
        case .end:
            respond(context: context)
        }
    }

    private func respond(context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        switch path {
        case "/small":
            headers.add(name: "Content-Length", value: String(Self.small.readableBytes))
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))),
                promise: nil
            )
            context.write(wrapOutboundOut(.body(.byteBuffer(Self.small))), promise: nil)
            finish(context: context)
        case "/big":
            headers.add(name: "Content-Length", value: String(bigBytes))
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))),
                promise: nil
            )
            bigRemaining = bigBytes
            pump(context: context)
        default:
            headers.add(name: "Content-Length", value: "0")
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .notFound, headers: headers))),
                promise: nil
            )
            finish(context: context)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        pump(context: context)
    }

    /// Re-entrant (a write or flush can change writability on the spot): the remaining count is updated per write.
    private func pump(context: ChannelHandlerContext) {
        while context.channel.isWritable, let remaining = bigRemaining, remaining > 0 {
            let length = min(chunk.readableBytes, remaining)
            bigRemaining = remaining - length
            context.write(wrapOutboundOut(.body(.byteBuffer(chunk.getSlice(at: 0, length: length)!))), promise: nil)
        }
        if bigRemaining == 0 {
            bigRemaining = nil
            finish(context: context)
        } else if bigRemaining != nil {
            context.flush()
        }
    }

    private func finish(context: ChannelHandlerContext) {
        guard !keepAlive else {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in bound.value.close(promise: nil) }
    }
}
