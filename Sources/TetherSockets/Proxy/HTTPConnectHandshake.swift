import Foundation
import NIOCore

/// The client side of an HTTP `CONNECT` tunnel (RFC 9110 §9.3.6), with Basic authentication (RFC 7617) when
/// credentials are given, as a value: bytes in, actions out, no I/O.
///
/// Sends `CONNECT host:port HTTP/1.1` with `Host` (and `Proxy-Authorization: Basic …`), then reads the response
/// header up to its empty line: a 2xx opens the tunnel, and every byte after the header stays in the buffer for the
/// tunnel (a 2xx to `CONNECT` has no body, RFC 9110 §9.3.6); 1xx responses are skipped; 407 (and 401, which
/// tinyproxy sends for a wrong password) fails as
/// `.authenticationRequired` (no credentials sent) or `.authenticationFailed` (they were refused); any other status
/// as `.httpStatus`, each with the proxy's status line. A header longer than ``maximumHeaderLength`` fails as
/// `.responseTooLarge`.
struct HTTPConnectHandshake {
    /// The longest response header accepted, status line included (16 KiB).
    static let maximumHeaderLength = 16 * 1024

    enum State: Equatable {
        case idle
        case awaitingResponse
        case established
        case failed
    }

    private(set) var state = State.idle
    let target: ProxyTarget
    let credentials: ProxyCredentials?
    /// `host:port` of the proxy, for messages.
    let proxyName: String
    let maximumHeaderLength: Int

    init(
        target: ProxyTarget,
        credentials: ProxyCredentials?,
        proxyName: String,
        maximumHeaderLength: Int = HTTPConnectHandshake.maximumHeaderLength
    ) {
        self.target = target
        self.credentials = credentials
        self.proxyName = proxyName
        self.maximumHeaderLength = maximumHeaderLength
    }

    /// The request.
    mutating func start() -> ProxyHandshakeAction {
        precondition(state == .idle, "start() once")
        let authority = target.authority
        guard !authority.contains(where: { $0 == "\r" || $0 == "\n" || $0 == " " }) else {
            state = .failed
            return .fail(ProxyError(code: .badConfiguration, message: "The target host contains spaces or newlines"))
        }
        var request = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let credentials {
            let token = Data("\(credentials.username):\(credentials.password)".utf8).base64EncodedString()
            request += "Proxy-Authorization: Basic \(token)\r\n"
        }
        request += "\r\n"
        state = .awaitingResponse
        return .write(ByteBuffer(string: request))
    }

    /// Consumes the response header once it is all there.
    mutating func received(_ buffer: inout ByteBuffer) -> ProxyHandshakeAction {
        while state == .awaitingResponse {
            guard let headerLength = Self.headerLength(in: buffer, limit: maximumHeaderLength) else {
                if buffer.readableBytes > maximumHeaderLength { return tooLarge() }
                return .waitForMoreBytes
            }
            guard headerLength <= maximumHeaderLength else { return tooLarge() }
            let header = buffer.readString(length: headerLength) ?? ""
            let statusLine = String(header.prefix { $0 != "\r\n" && $0 != "\n" && $0 != "\r" })
            let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let status = Int(parts[1])
            else {
                return fail(
                    .protocolViolation,
                    "HTTP proxy \(proxyName) answered CONNECT with \"\(Self.printable(statusLine))\"",
                    status: nil,
                    statusLine: Self.printable(statusLine)
                )
            }
            switch status {
            case 100...199:
                continue
            case 200...299:
                state = .established
                return .tunnelEstablished
            case 401, 407:
                let code: ProxyError.Code = credentials == nil ? .authenticationRequired : .authenticationFailed
                let what =
                    credentials == nil
                    ? "requires authentication and no credentials were given"
                    : "refused the login of user '\(credentials?.username ?? "")'"
                return fail(
                    code,
                    "HTTP proxy \(proxyName) \(what) (\(statusLine))",
                    status: status,
                    statusLine: statusLine
                )
            default:
                return fail(
                    .httpStatus,
                    "HTTP proxy \(proxyName) answered CONNECT \(target.authority) with \"\(statusLine)\"",
                    status: status,
                    statusLine: statusLine
                )
            }
        }
        return .waitForMoreBytes
    }

    /// The proxy closed before the tunnel was up.
    mutating func endOfInput() -> ProxyHandshakeAction {
        guard state == .awaitingResponse else { return .waitForMoreBytes }
        return fail(
            .closedDuringHandshake,
            "HTTP proxy \(proxyName) closed the connection before answering CONNECT",
            status: nil,
            statusLine: nil
        )
    }

    /// The length of the header (through its empty line, CRLF or a bare LF), or nil when it has not ended within
    /// `limit` + 4 bytes.
    static func headerLength(in buffer: ByteBuffer, limit: Int) -> Int? {
        let bytes = buffer.readableBytesView
        var index = bytes.startIndex
        let end = min(bytes.endIndex, bytes.startIndex + limit + 4)
        while index < end {
            if bytes[index] == 0x0A {
                let next = bytes.index(after: index)
                if next < bytes.endIndex, bytes[next] == 0x0A { return next + 1 - bytes.startIndex }
                if next + 1 < bytes.endIndex, bytes[next] == 0x0D, bytes[next + 1] == 0x0A {
                    return next + 2 - bytes.startIndex
                }
            }
            index += 1
        }
        return nil
    }

    private mutating func tooLarge() -> ProxyHandshakeAction {
        fail(
            .responseTooLarge,
            "HTTP proxy \(proxyName) sent a response header longer than \(maximumHeaderLength) bytes",
            status: nil,
            statusLine: nil
        )
    }

    private mutating func fail(
        _ code: ProxyError.Code,
        _ message: String,
        status: Int?,
        statusLine: String?
    ) -> ProxyHandshakeAction {
        state = .failed
        return .fail(ProxyError(code: code, message: message, replyCode: status, statusLine: statusLine))
    }

    /// A status line for a message: control characters replaced, at most 200 characters.
    private static func printable(_ text: String) -> String {
        String(text.unicodeScalars.prefix(200).map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
    }
}
