import NIOCore
import NIOHTTP1

/// Answers every request with 1 KiB; the clients keep their connections alive.
final class HTTPPeerHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    static let bodyLength = 1_024
    private let body = ByteBuffer(repeating: 0x61, count: HTTPPeerHandler.bodyLength)

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head, .body:
            break
        case .end:
            var headers = HTTPHeaders()
            headers.add(name: "Content-Length", value: String(Self.bodyLength))
            headers.add(name: "Content-Type", value: "application/octet-stream")
            let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}

@available(*, unavailable)
extension HTTPPeerHandler: Sendable {}
