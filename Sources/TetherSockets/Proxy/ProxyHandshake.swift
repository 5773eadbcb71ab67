import NIOCore

/// The handshake for one proxy kind: ``SOCKS5Handshake`` or ``HTTPConnectHandshake`` behind one interface.
enum ProxyHandshake {
    case socks5(SOCKS5Handshake)
    case httpConnect(HTTPConnectHandshake)

    init(proxy: ProxyConfiguration, target: ProxyTarget) {
        let name = ProxyTarget(host: proxy.host, port: proxy.port).authority
        switch proxy.kind {
        case .socks5:
            self = .socks5(SOCKS5Handshake(target: target, credentials: proxy.credentials, proxyName: name))
        case .httpConnect:
            self = .httpConnect(HTTPConnectHandshake(target: target, credentials: proxy.credentials, proxyName: name))
        }
    }

    mutating func start() -> ProxyHandshakeAction {
        switch self {
        case .socks5(var machine):
            defer { self = .socks5(machine) }
            return machine.start()
        case .httpConnect(var machine):
            defer { self = .httpConnect(machine) }
            return machine.start()
        }
    }

    mutating func received(_ buffer: inout ByteBuffer) -> ProxyHandshakeAction {
        switch self {
        case .socks5(var machine):
            defer { self = .socks5(machine) }
            return machine.received(&buffer)
        case .httpConnect(var machine):
            defer { self = .httpConnect(machine) }
            return machine.received(&buffer)
        }
    }

    mutating func endOfInput() -> ProxyHandshakeAction {
        switch self {
        case .socks5(var machine):
            defer { self = .socks5(machine) }
            return machine.endOfInput()
        case .httpConnect(var machine):
            defer { self = .httpConnect(machine) }
            return machine.endOfInput()
        }
    }
}
