import Foundation
import NIOCore
import NIOHTTP1
import TetherHTTP

/// One connection of ``CacheTestsOrigin``: the suite's origin (test-engine/server) ported request for request.
///
/// - `PUT /config/{id}`: stores the test's requests (201; 409 when the id has one already)
/// - `GET /state/{id}`: what the origin saw of the test's requests, as JSON (404 before any)
/// - `/test/{id}[/…]`: answers request `Req-Num` of the test as configured (status, headers with date offsets
///   resolved, the test id as body) and records it; a `…validated` request gets a 304 only if it carries the
///   previous response's validator, else status 999
///
/// The head is written as bytes, not through NIO's encoder, so that what the suite configures goes on the wire as
/// the suite's Node origin would write it: repeated headers as separate lines, any status code, a `Content-Length`
/// or `Transfer-Encoding` chosen by the test.
final class CacheTestsOriginHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = ByteBuffer

    /// A response before it is written: status line, header lines and body, and whether the connection ends after.
    struct Response {
        var status: Int
        var reason: String
        var headers: [(String, String)] = []
        var body: [UInt8] = []
        var hasBody = true
        var closes = false
    }

    private let state: CacheTestsOriginState
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []

    init(state: CacheTestsOriginState) {
        self.state = state
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            self.body = []
        case .body(var chunk):
            self.body += chunk.readBytes(length: chunk.readableBytes) ?? []
        case .end:
            guard let head = self.head else { return }
            self.head = nil
            self.route(head, body: self.body, context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func route(_ head: HTTPRequestHead, body: [UInt8], context: ChannelHandlerContext) {
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        var segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        let dispatch = segments.isEmpty ? "" : segments.removeFirst()
        let id = segments.first ?? ""
        switch dispatch {
        case "config":
            self.write(self.putConfig(head, id: id, body: body), head: head, context: context)
        case "state":
            self.write(self.getState(id: id), head: head, context: context)
        case "test":
            guard let requests = self.state.config(for: id) else {
                self.write(Self.plain(409, "Requests not found for \(id)"), head: head, context: context)
                return
            }
            let serverNumber = (self.state.state(for: id)?.count ?? 0) + 1
            let clientNumber = head.headers.first(name: "Req-Num").flatMap(CacheTestChecks.parseInt)
            let number = (clientNumber ?? 0) != 0 ? clientNumber! : serverNumber
            guard requests.indices.contains(number - 1) else {
                self.write(
                    Self.plain(409, "config not found for request \(serverNumber)"),
                    head: head,
                    context: context
                )
                return
            }
            let respond = {
                self.answerTest(head, id: id, number: number, clientNumber: clientNumber, context: context)
            }
            if let pause = requests[number - 1]["response_pause"]?.number {
                if let clock = self.state.clock(for: id) {
                    // Virtual time: the pause passes on the test's clock, between the request and the response.
                    clock.advance(by: .milliseconds(Int64(pause * 1000)))
                    respond()
                } else {
                    context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(pause * 1000))) {
                        respond()
                    }
                }
            } else {
                respond()
            }
        default:
            self.write(Self.plain(404, "\(path) Not Found"), head: head, context: context)
        }
    }

    private func putConfig(_ head: HTTPRequestHead, id: String, body: [UInt8]) -> Response {
        guard head.method == .PUT else { return Self.plain(405, "\(head.method.rawValue) request to config for \(id)") }
        guard let requests = try? JSONDecoder().decode([CacheTestJSON].self, from: Data(body)) else {
            return Self.plain(400, "Bad config for \(id)")
        }
        guard self.state.setConfig(requests.map(CacheTestRequest.init), for: id) else {
            return Self.plain(409, "Config already exists for \(id)")
        }
        return Response(status: 201, reason: "Created", body: Array("OK".utf8))
    }

    private func getState(id: String) -> Response {
        guard let records = self.state.state(for: id), let json = try? JSONEncoder().encode(records) else {
            return Self.plain(404, "State not found for \(id)")
        }
        return Response(status: 200, reason: "OK", headers: [("Content-Type", "text/plain")], body: Array(json))
    }

    /// `continueHandleTest` of the suite's origin.
    private func answerTest(
        _ head: HTTPRequestHead,
        id: String,
        number: Int,
        clientNumber: Int?,
        context: ChannelHandlerContext
    ) {
        let requests = self.state.config(for: id) ?? []
        let config = requests[number - 1]
        let previous = number >= 2 ? requests[number - 2] : nil
        let serverNumber = (self.state.state(for: id)?.count ?? 0) + 1
        let date = self.state.now(for: id)
        let now = (date.timeIntervalSince1970 * 1000).rounded(.down)

        var status =
            config["response_status"]?.array.map { ($0.first?.int ?? 200, $0.dropFirst().first?.text ?? "") }
            ?? (200, "OK")
        if config.expectedType?.hasSuffix("validated") == true {
            let lastModified = previous?.responseHeader("Last-Modified")
            let etag = previous?.responseHeader("ETag")
            if let lastModified, head.headers.first(name: "If-Modified-Since") == lastModified.string {
                status = (304, "Not Modified")
            }
            if let etag, head.headers.first(name: "If-None-Match") == etag.string {
                status = (304, "Not Modified")
            }
            if status.0 != 304 { status = (999, "304 Not Generated") }
        }

        var response = Response(status: status.0, reason: status.1)
        let clientText = clientNumber.map(String.init) ?? "NaN"
        var headers: [(name: String, values: [String])] = [
            ("Server-Base-Url", [head.uri]), ("Server-Request-Count", [String(serverNumber)]),
            ("Client-Request-Count", [clientText]), ("Server-Now", [String(Int64(now))]),
        ]
        func index(of name: String) -> Int? { headers.firstIndex { $0.name.lowercased() == name.lowercased() } }
        var written: [CacheTestJSON] = []
        var saved: [(name: String, values: [String])] = []
        for header in config.responseHeaders {
            let value = CacheTestHeaderFixup.fixup(
                name: header.name,
                value: header.value,
                serverNow: String(Int64(now)),
                baseURL: head.uri,
                request: config
            )
            written.append(.array([.string(header.name), value] + (header.isChecked ? [] : [.bool(false)])))
            if let existing = index(of: header.name) {
                headers[existing].values.append(value.text)
            } else {
                headers.append((header.name, [value.text]))
            }
            if header.isChecked {
                let values = headers[index(of: header.name)!].values
                if let existing = saved.firstIndex(where: { $0.name == header.name }) {
                    saved[existing].values = values
                } else {
                    saved.append((header.name, values))
                }
            }
        }
        self.state.recordWrittenHeaders(written, id: id, index: number - 1)
        if index(of: "Content-Type") == nil { headers.append(("Content-Type", ["text/plain"])) }

        let savedJSON = saved.map { entry -> CacheTestJSON in
            .array([
                .string(entry.name),
                entry.values.count == 1 ? .string(entry.values[0]) : .array(entry.values.map { .string($0) }),
            ])
        }
        let record: CacheTestJSON = .object([
            "request_num": clientNumber.map { .number(Double($0)) } ?? .null,
            "request_method": .string(head.method.rawValue),
            "request_headers": .object(Self.nodeHeaders(head.headers)),
            "response_headers": .array(savedJSON),
        ])
        let numbers = self.state.append(record, for: id)
        headers.append(("Request-Numbers", [numbers.map { $0.isNull ? "null" : $0.text }.joined(separator: " ")]))

        if config["disconnect"]?.bool == true {
            context.close(promise: nil)
            return
        }
        for (name, values) in headers { for value in values { response.headers.append((name, value)) } }
        response.hasBody = ![204, 304].contains(status.0) && head.method != .HEAD
        response.body = Array((config["response_body"]?.string.flatMap { $0.isEmpty ? nil : $0 } ?? id).utf8)
        self.write(response, head: head, date: date, context: context)
    }

    /// Node's `request.headers`: lower-case names; repeated fields joined with `, ` (`cookie` with `; `,
    /// `set-cookie` kept as a list, and the single-valued fields Node knows keep their first value).
    static func nodeHeaders(_ headers: HTTPHeaders) -> [String: CacheTestJSON] {
        let firstOnly: Set<String> = [
            "age", "authorization", "content-length", "content-type", "etag", "expires", "from", "host",
            "if-modified-since", "if-unmodified-since", "last-modified", "location", "max-forwards",
            "proxy-authorization", "referer", "retry-after", "server", "user-agent",
        ]
        var result: [String: CacheTestJSON] = [:]
        for (name, value) in headers {
            let name = name.lowercased()
            switch (name, result[name]) {
            case (_, nil): result[name] = name == "set-cookie" ? .array([.string(value)]) : .string(value)
            case ("set-cookie", .array(let values)?): result[name] = .array(values + [.string(value)])
            case ("cookie", .string(let existing)?): result[name] = .string(existing + "; " + value)
            case (_, .string(let existing)?) where !firstOnly.contains(name):
                result[name] = .string(existing + ", " + value)
            default: break
            }
        }
        return result
    }

    private static func plain(_ status: Int, _ message: String) -> Response {
        Response(
            status: status,
            reason: "",
            headers: [("Content-Type", "text/plain")],
            body: Array("\(message)\n".utf8)
        )
    }

    /// Writes `response` with the framing Node would choose: the test's own `Content-Length` (the body cut to it)
    /// or `Transfer-Encoding`, else a `Content-Length` of the body; no body for HEAD, 204 and 304; a `Date` of `date`
    /// unless the test configured one.
    private func write(
        _ response: Response,
        head: HTTPRequestHead,
        date: Date = Date(),
        context: ChannelHandlerContext
    ) {
        var response = response
        let has = { (name: String) in response.headers.contains { $0.0.lowercased() == name } }
        if !has("date") {
            response.headers.append(
                ("Date", CacheTestHeaderFixup.httpDate(milliseconds: date.timeIntervalSince1970 * 1000))
            )
        }
        if !has("connection") { response.headers.append(("Connection", "keep-alive")) }
        var body = response.hasBody ? response.body : []
        if !response.hasBody {
            // A 304, a 204 or the answer to a HEAD ends with its head, whatever its framing fields say.
        } else if let length = response.headers.last(where: { $0.0.lowercased() == "content-length" }).flatMap({
            Int($0.1)
        }) {
            if body.count > length {
                body = Array(body.prefix(length))
            } else if body.count < length {
                response.closes = true
            }
        } else if let encoding = response.headers.last(where: { $0.0.lowercased() == "transfer-encoding" })?.1 {
            if encoding.lowercased().hasSuffix("chunked") {
                body =
                    body.isEmpty
                    ? Array("0\r\n\r\n".utf8)
                    : Array("\(String(body.count, radix: 16))\r\n".utf8) + body + Array("\r\n0\r\n\r\n".utf8)
            } else {
                response.closes = true
            }
        } else {
            response.headers.append(("Content-Length", String(body.count)))
        }
        var text = "HTTP/1.1 \(response.status) \(response.reason)\r\n"
        for (name, value) in response.headers { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        var buffer = context.channel.allocator.buffer(capacity: text.utf8.count + body.count)
        buffer.writeString(text)
        buffer.writeBytes(body)
        let closes = response.closes || !head.isKeepAlive
        context.writeAndFlush(self.wrapOutboundOut(buffer)).assumeIsolated().whenComplete { _ in
            if closes { context.close(promise: nil) }
        }
    }
}
