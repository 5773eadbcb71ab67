import Foundation
import NIOCore
import NIOHTTP1
import TetherConcurrency

/// One connection of ``RangeOrigin``.
final class RangeOriginHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let state: LockedBox<RangeOrigin.State>
    private let fault: @Sendable (RangeOrigin.Request, Int) -> RangeOrigin.Fault
    private var head: HTTPRequestHead?

    init(
        state: LockedBox<RangeOrigin.State>,
        fault: @escaping @Sendable (RangeOrigin.Request, Int) -> RangeOrigin.Fault
    ) {
        self.state = state
        self.fault = fault
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
            let request = RangeOrigin.Request(
                range: head.headers.first(name: "Range"),
                ifRange: head.headers.first(name: "If-Range")
            )
            let resource = self.state.withLock { state in
                state.requests.append(request)
                return state.resource
            }
            let fault = self.fault(request, resource.body.count)
            var (status, headers, payload) = RangeOrigin.answer(
                request,
                resource: resource,
                ignoringIfRange: { if case .ignoreIfRange = fault { true } else { false } }()
            )
            if case .wrongStart = fault, status == .partialContent, let first = payload.indices.first,
                first + 1 < resource.body.count
            {
                payload = resource.body[(first + 1)...]
                headers.replaceOrAdd(
                    name: "Content-Range",
                    value: "bytes \(first + 1)-\(resource.body.count - 1)/\(resource.body.count)"
                )
            }
            headers.replaceOrAdd(name: "Content-Length", value: String(payload.count))
            context.write(
                self.wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
                promise: nil
            )
            switch fault {
            case .cut(let bytes), .stall(let bytes):
                // A cut closes once the bytes before it are on the wire.
                let channel = context.channel
                let closes: Bool = if case .cut = fault { true } else { false }
                let sent = ByteBuffer(bytes: payload.prefix(bytes))
                context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(sent)))).whenComplete { _ in
                    if closes { channel.close(promise: nil) }
                }
            case .none, .ignoreIfRange, .wrongStart:
                if !payload.isEmpty {
                    context.write(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: payload)))), promise: nil)
                }
                context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
