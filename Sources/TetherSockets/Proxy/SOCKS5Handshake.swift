import NIOCore

/// The client side of a SOCKS5 handshake (RFC 1928), with username/password authentication (RFC 1929) when
/// credentials are given, as a value: bytes in, actions out, no I/O.
///
/// Greeting (methods: no authentication, plus username/password with credentials) → the proxy's choice → the login
/// when it chose username/password → `CONNECT` to the target (a domain name, sent unresolved, or an IPv4/IPv6
/// address) → the reply. A reply other than 0 fails with the code for it (``ProxyError/Code/socks5Reply(_:)``);
/// bytes after the reply stay in the buffer: they are the tunnel's.
struct SOCKS5Handshake {
    enum State: Equatable {
        case idle
        case awaitingMethod
        case awaitingAuthentication
        case awaitingReply
        case established
        case failed
    }

    private(set) var state = State.idle
    let target: ProxyTarget
    let credentials: ProxyCredentials?
    /// `host:port` of the proxy, for messages.
    let proxyName: String

    init(target: ProxyTarget, credentials: ProxyCredentials?, proxyName: String) {
        self.target = target
        self.credentials = credentials
        self.proxyName = proxyName
    }

    /// The greeting.
    mutating func start() -> ProxyHandshakeAction {
        precondition(state == .idle, "start() once")
        if let credentials {
            let user = credentials.username.utf8.count
            let password = credentials.password.utf8.count
            guard (1...255).contains(user), (1...255).contains(password) else {
                return fail(
                    .badConfiguration,
                    "SOCKS5 user names and passwords are 1 to 255 bytes (got \(user) and \(password))"
                )
            }
        }
        if case .domainName(let name) = target.address, !(1...255).contains(name.utf8.count) {
            return fail(.badConfiguration, "SOCKS5 host names are 1 to 255 bytes (got \(name.utf8.count))")
        }
        state = .awaitingMethod
        let methods: [UInt8] = credentials == nil ? [0x00] : [0x00, 0x02]
        return .write(ByteBuffer(bytes: [0x05, UInt8(methods.count)] + methods))
    }

    /// Consumes the proxy's bytes that the current step needs, when they are all there.
    mutating func received(_ buffer: inout ByteBuffer) -> ProxyHandshakeAction {
        switch state {
        case .idle, .established, .failed:
            return .waitForMoreBytes
        case .awaitingMethod:
            guard let bytes = buffer.readBytes(length: 2) else { return .waitForMoreBytes }
            guard bytes[0] == 0x05 else {
                return fail(.protocolViolation, "\(proxyName) is not a SOCKS5 proxy (version byte \(hex(bytes[0])))")
            }
            switch bytes[1] {
            case 0x00:
                return connectRequest()
            case 0x02 where credentials != nil:
                return login()
            case 0xFF:
                if credentials == nil {
                    return fail(
                        .authenticationRequired,
                        "SOCKS5 proxy \(proxyName) requires authentication and no credentials were given",
                        reply: 0xFF
                    )
                }
                return fail(
                    .authenticationRequired,
                    "SOCKS5 proxy \(proxyName) accepts neither no authentication nor username/password",
                    reply: 0xFF
                )
            default:
                return fail(
                    .protocolViolation,
                    "SOCKS5 proxy \(proxyName) chose method \(hex(bytes[1])), which was not offered",
                    reply: Int(bytes[1])
                )
            }
        case .awaitingAuthentication:
            guard let bytes = buffer.readBytes(length: 2) else { return .waitForMoreBytes }
            guard bytes[1] == 0x00 else {
                let user = credentials?.username ?? ""
                return fail(
                    .authenticationFailed,
                    "SOCKS5 proxy \(proxyName) refused the login of user '\(user)' (status \(hex(bytes[1])))",
                    reply: Int(bytes[1])
                )
            }
            return connectRequest()
        case .awaitingReply:
            return reply(&buffer)
        }
    }

    /// The proxy closed before the tunnel was up.
    mutating func endOfInput() -> ProxyHandshakeAction {
        guard state != .established, state != .failed else { return .waitForMoreBytes }
        return fail(.closedDuringHandshake, "SOCKS5 proxy \(proxyName) closed the connection during the handshake")
    }

    private mutating func login() -> ProxyHandshakeAction {
        guard let credentials else { return fail(.protocolViolation, "no credentials") }
        state = .awaitingAuthentication
        var out = ByteBuffer()
        out.writeInteger(UInt8(0x01))
        out.writeInteger(UInt8(credentials.username.utf8.count))
        out.writeString(credentials.username)
        out.writeInteger(UInt8(credentials.password.utf8.count))
        out.writeString(credentials.password)
        return .write(out)
    }

    private mutating func connectRequest() -> ProxyHandshakeAction {
        state = .awaitingReply
        var out = ByteBuffer(bytes: [0x05, 0x01, 0x00])
        switch target.address {
        case .ipv4(let bytes):
            out.writeInteger(UInt8(0x01))
            out.writeBytes(bytes)
        case .ipv6(let bytes):
            out.writeInteger(UInt8(0x04))
            out.writeBytes(bytes)
        case .domainName(let name):
            out.writeInteger(UInt8(0x03))
            out.writeInteger(UInt8(name.utf8.count))
            out.writeString(name)
        }
        out.writeInteger(UInt16(truncatingIfNeeded: target.port))
        return .write(out)
    }

    /// `VER REP RSV ATYP BND.ADDR BND.PORT`: a refusal fails as soon as `REP` is there; a success waits for the
    /// whole reply, so that no byte of it reaches the tunnel.
    private mutating func reply(_ buffer: inout ByteBuffer) -> ProxyHandshakeAction {
        guard buffer.readableBytes >= 2, let version = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self),
            let code = buffer.getInteger(at: buffer.readerIndex + 1, as: UInt8.self)
        else { return .waitForMoreBytes }
        guard version == 0x05 else {
            return fail(.protocolViolation, "SOCKS5 proxy \(proxyName) replied with version byte \(hex(version))")
        }
        guard code == 0x00 else {
            buffer.moveReaderIndex(forwardBy: 2)
            return fail(
                .socks5Reply(code),
                "SOCKS5 proxy \(proxyName) refused the connection to \(target.authority) "
                    + "(reply \(hex(code)): \(Self.meaning(of: code)))",
                reply: Int(code)
            )
        }
        guard buffer.readableBytes >= 5,
            let addressType = buffer.getInteger(at: buffer.readerIndex + 3, as: UInt8.self)
        else { return .waitForMoreBytes }
        let addressLength: Int
        switch addressType {
        case 0x01: addressLength = 4
        case 0x04: addressLength = 16
        case 0x03: addressLength = 1 + Int(buffer.getInteger(at: buffer.readerIndex + 4, as: UInt8.self) ?? 0)
        default:
            return fail(
                .protocolViolation,
                "SOCKS5 proxy \(proxyName) replied with address type \(hex(addressType))"
            )
        }
        let length = 4 + addressLength + 2
        guard buffer.readableBytes >= length else { return .waitForMoreBytes }
        buffer.moveReaderIndex(forwardBy: length)
        state = .established
        return .tunnelEstablished
    }

    private mutating func fail(_ code: ProxyError.Code, _ message: String, reply: Int? = nil) -> ProxyHandshakeAction {
        state = .failed
        return .fail(ProxyError(code: code, message: message, replyCode: reply))
    }

    /// RFC 1928 §6's words for a reply code.
    static func meaning(of reply: UInt8) -> String {
        switch reply {
        case 0x01: return "general SOCKS server failure"
        case 0x02: return "connection not allowed by ruleset"
        case 0x03: return "network unreachable"
        case 0x04: return "host unreachable"
        case 0x05: return "connection refused"
        case 0x06: return "TTL expired"
        case 0x07: return "command not supported"
        case 0x08: return "address type not supported"
        default: return "unassigned"
        }
    }

    private func hex(_ byte: UInt8) -> String {
        "0x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
    }
}
