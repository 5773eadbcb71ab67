import NIOCore
import NIOHTTP1

/// Answers one connection's requests for ``HTTPStressServer`` and counts them by kind (`full_cached`,
/// `not_modified`, `full_validated`, `full_fresh`, `requests`).
final class HTTPStressHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let counters: ServerCounters
    private var head: HTTPRequestHead?

    init(counters: ServerCounters) {
        self.counters = counters
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let requestHead):
            head = requestHead
        case .body:
            break
        case .end:
            if let head { respond(to: head, context: context) }
            head = nil
        }
    }

    private func respond(to request: HTTPRequestHead, context: ChannelHandlerContext) {
        counters.add("requests")
        let path = request.uri
        var headers = HTTPHeaders()
        var status = HTTPResponseStatus.ok
        var body: String? = HTTPStressServer.body(for: path)
        let etag = "\"\(path)\""
        if path.hasPrefix("/cached/") || path.hasPrefix("/validated/") {
            headers.add(name: "Cache-Control", value: path.hasPrefix("/cached/") ? "max-age=2" : "no-cache")
            headers.add(name: "ETag", value: etag)
            if request.headers["If-None-Match"].contains(etag) {
                status = .notModified
                body = nil
                counters.add("not_modified")
            } else {
                counters.add(path.hasPrefix("/cached/") ? "full_cached" : "full_validated")
            }
        } else if path.hasPrefix("/fresh/") {
            headers.add(name: "Cache-Control", value: "no-store")
            counters.add("full_fresh")
        } else {
            status = .notFound
            body = ""
            counters.add("not_found")
        }
        let bytes = body.map { ByteBuffer(string: $0) }
        if let bytes { headers.add(name: "Content-Length", value: String(bytes.readableBytes)) }
        if !request.isKeepAlive { headers.add(name: "Connection", value: "close") }
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
            promise: nil
        )
        if let bytes { context.write(wrapOutboundOut(.body(.byteBuffer(bytes))), promise: nil) }
        let keepAlive = request.isKeepAlive
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            if !keepAlive { bound.value.close(promise: nil) }
        }
    }
}
