import NIOCore
import TetherSockets

/// A small SOCKS5 proxy (RFC 1928 with RFC 1929's username/password, `CONNECT` only) for the demo, so that its
/// proxy step runs without installing one. Each client: the method choice, the login, the request, then bytes
/// relayed both ways until either side ends.
struct DemoSOCKS5Proxy: Sendable {
    let username: String
    let password: String

    func serve(_ client: TCPConnection) async {
        await session(client)
        try? await client.close()
    }

    private func session(_ client: TCPConnection) async {
        do {
            let greeting = try await client.read(toLength: 2, timeout: .seconds(10))
            let methods = try await client.read(toLength: Int(greeting.getInteger(at: 1, as: UInt8.self) ?? 0))
            guard methods.readableBytesView.contains(0x02) else {
                try await client.write(contentsOf: [0x05, 0xFF])
                return
            }
            try await client.write(contentsOf: [0x05, 0x02])
            guard try await login(client) else {
                try await client.write(contentsOf: [0x01, 0x01])
                return
            }
            try await client.write(contentsOf: [0x01, 0x00])
            let (host, port) = try await request(client)
            let target: TCPConnection
            do {
                target = try await TCPConnection.connect(host: host, port: port, timeout: .seconds(10))
            } catch {
                try await client.write(contentsOf: [0x05, 0x05, 0x00, 0x01, 0, 0, 0, 0, 0, 0])
                return
            }
            try await client.write(contentsOf: [0x05, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0])
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await Self.relay(from: client, to: target) }
                group.addTask { await Self.relay(from: target, to: client) }
            }
            try? await target.close()
        } catch {
            return
        }
    }

    private func login(_ client: TCPConnection) async throws -> Bool {
        let header = try await client.read(toLength: 2, timeout: .seconds(10))
        let user = try await client.read(toLength: Int(header.getInteger(at: 1, as: UInt8.self) ?? 0))
        let length = try await client.read(toLength: 1)
        let secret = try await client.read(toLength: Int(length.getInteger(at: 0, as: UInt8.self) ?? 0))
        return String(buffer: user) == username && String(buffer: secret) == password
    }

    private func request(_ client: TCPConnection) async throws -> (String, Int) {
        let header = try await client.read(toLength: 4, timeout: .seconds(10))
        let host: String
        switch header.getInteger(at: 3, as: UInt8.self) {
        case 0x01:
            let bytes = try await client.read(toLength: 4)
            host = bytes.readableBytesView.map(String.init).joined(separator: ".")
        case 0x03:
            let length = try await client.read(toLength: 1)
            host = String(buffer: try await client.read(toLength: Int(length.getInteger(at: 0, as: UInt8.self) ?? 0)))
        default:
            throw DemoFailure(description: "the demo proxy takes IPv4 addresses and names")
        }
        let port = try await client.read(toLength: 2)
        return (host, Int(port.getInteger(at: 0, as: UInt16.self) ?? 0))
    }

    /// Copies `source` to `sink` until `source` ends, then half-closes `sink`.
    private static func relay(from source: TCPConnection, to sink: TCPConnection) async {
        while let bytes = try? await source.readAvailable() {
            guard (try? await sink.write(bytes)) != nil else { return }
        }
        try? await sink.halfClose()
    }
}
