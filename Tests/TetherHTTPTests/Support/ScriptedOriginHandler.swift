import Foundation
import NIOCore
import NIOHTTP1
import TetherConcurrency

/// One connection of ``ScriptedOrigin``.
final class ScriptedOriginHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let respond: @Sendable (ScriptedOrigin.Request) -> ScriptedOrigin.Response
    private let recorded: LockedBox<[ScriptedOrigin.Request]>
    private var head: HTTPRequestHead?

    init(
        respond: @escaping @Sendable (ScriptedOrigin.Request) -> ScriptedOrigin.Response,
        recorded: LockedBox<[ScriptedOrigin.Request]>
    ) {
        self.respond = respond
        self.recorded = recorded
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body:
            break
        case .end:
            guard let head = self.head else { return }
            self.head = nil
            let request = ScriptedOrigin.Request(method: head.method.rawValue, uri: head.uri, headers: head.headers)
            self.recorded.withLock { $0.append(request) }
            let response = self.respond(request)
            var headers = HTTPHeaders(response.headers)
            headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
            let status = HTTPResponseStatus(statusCode: response.status)
            context.write(
                self.wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
                promise: nil
            )
            if !response.body.isEmpty, head.method != .HEAD {
                context.write(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
            }
            context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
