import Foundation
import NIOCore
import NIOHTTP1

/// The routes of ``HTTP2TestServer``, as plain HTTP/1 parts (one handler per HTTP/2 stream, or per HTTP/1.1
/// connection):
///
/// - `/hello`: 200 `hello over h2` (text/plain; charset=utf-8)
/// - `/echo-version`: 200, the request's version as the server saw it (`HTTP/2.0`, `HTTP/1.1`)
/// - `/redirect`: 302 to `/hello`
/// - `/big?size=N`: 200, N bytes (byte i is i % 251), written in parts of about 64 KiB
/// - `/together?n=N`: 200 `together` once N requests of `/together` have arrived (``HTTP2TestServerLog/meet(_:release:)``)
/// - `/cached`: 200 `cached`, fresh for ten minutes
/// - `/headers`: 200 with the mixed-case header `X-Mixed-Case: Yes` (lower case on the HTTP/2 wire)
/// - anything else: 404
final class HTTP2TestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let log: HTTP2TestServerLog
    private var head: HTTPRequestHead?

    init(log: HTTP2TestServerLog) {
        self.log = log
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
            self.respond(to: head, context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let components = URLComponents(string: head.uri)
        let path = components?.path ?? head.uri
        let number = { (name: String) in
            components?.queryItems?.first { $0.name == name }?.value.flatMap { Int($0) } ?? 0
        }
        self.log.received(path)
        let version = head.version
        switch path {
        case "/hello":
            Self.send(.ok, "hello over h2", version: version, context: context)
        case "/echo-version":
            Self.send(.ok, "HTTP/\(version.major).\(version.minor)", version: version, context: context)
        case "/redirect":
            Self.send(.found, "", headers: ["Location": "/hello"], version: version, context: context)
        case "/big":
            Self.sendBig(size: number("size"), version: version, context: context)
        case "/together":
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            let eventLoop = context.eventLoop
            self.log.meet(number("n")) {
                eventLoop.execute { Self.send(.ok, "together", version: version, context: bound.value) }
            }
        case "/cached":
            Self.send(.ok, "cached", headers: ["Cache-Control": "max-age=600"], version: version, context: context)
        case "/headers":
            Self.send(.ok, "headers", headers: ["X-Mixed-Case": "Yes"], version: version, context: context)
        default:
            Self.send(.notFound, "not found", version: version, context: context)
        }
    }

    private static func send(
        _ status: HTTPResponseStatus,
        _ body: String,
        headers extra: [String: String] = [:],
        version: HTTPVersion,
        context: ChannelHandlerContext
    ) {
        var headers = HTTPHeaders([
            ("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", String(body.utf8.count)),
        ])
        for (name, value) in extra { headers.add(name: name, value: value) }
        context.write(
            Self.wrap(.head(HTTPResponseHead(version: version, status: status, headers: headers))),
            promise: nil
        )
        if !body.isEmpty {
            context.write(Self.wrap(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
        }
        context.writeAndFlush(Self.wrap(.end(nil)), promise: nil)
    }

    private static func sendBig(size: Int, version: HTTPVersion, context: ChannelHandlerContext) {
        let headers = HTTPHeaders([("Content-Type", "application/octet-stream"), ("Content-Length", String(size))])
        context.write(Self.wrap(.head(HTTPResponseHead(version: version, status: .ok, headers: headers))), promise: nil)
        // 261 rounds of 0...250: every part starts at a multiple of 251, so each is a prefix of this one.
        let part = ByteBuffer(bytes: (0..<(251 * 261)).map { UInt8($0 % 251) })
        var offset = 0
        while offset < size {
            let length = min(part.readableBytes, size - offset)
            context.write(Self.wrap(.body(.byteBuffer(part.getSlice(at: 0, length: length)!))), promise: nil)
            offset += length
        }
        context.writeAndFlush(Self.wrap(.end(nil)), promise: nil)
    }

    private static func wrap(_ part: HTTPServerResponsePart) -> NIOAny { NIOAny(part) }
}
