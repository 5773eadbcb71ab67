import Foundation
import NIOCore
import TetherSockets

extension DemoSteps {
    /// A connection through a SOCKS5 proxy with a login (``DemoSOCKS5Proxy``, in process: no package needed), to an
    /// echo server; then the same proxy refusing a wrong password, reported with its reason.
    static func proxyTunnel() async throws -> String {
        let echo = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let echoing = Task {
            try await withThrowingDiscardingTaskGroup { group in
                for try await connection in echo.connections {
                    group.addTask {
                        while let bytes = try? await connection.readAvailable() { try await connection.write(bytes) }
                        try? await connection.close()
                    }
                }
            }
        }
        let password = UUID().uuidString
        let proxyServer = DemoSOCKS5Proxy(username: "demo", password: password)
        let proxyListener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let proxying = Task {
            try await withThrowingDiscardingTaskGroup { group in
                for try await client in proxyListener.connections {
                    group.addTask { await proxyServer.serve(client) }
                }
            }
        }
        defer {
            echoing.cancel()
            proxying.cancel()
        }
        var proxy = ProxyConfiguration.socks5(
            host: "127.0.0.1",
            port: proxyListener.localPort,
            credentials: ProxyCredentials(username: "demo", password: password)
        )
        let connection = try await TCPConnection.connect(host: "127.0.0.1", port: echo.localPort, proxy: proxy)
        try await connection.write(ByteBuffer(string: "through the tunnel\n"))
        let line = try await connection.read(upTo: [0x0A], timeout: .seconds(10))
        try await connection.close()
        guard String(buffer: line) == "through the tunnel\n" else {
            throw DemoFailure(description: "the tunnel echoed \"\(String(buffer: line))\"")
        }
        proxy.credentials?.password = "not-\(password)"
        let refusal: String
        do {
            _ = try await TCPConnection.connect(host: "127.0.0.1", port: echo.localPort, proxy: proxy)
            throw DemoFailure(description: "the proxy accepted a wrong password")
        } catch let error as GCDAsyncSocketError where error.proxyError?.code == .authenticationFailed {
            refusal = error.message
        }
        try await echo.close()
        try await proxyListener.close()
        return "echoed a line via \(proxy.description.replacingOccurrences(of: "not-", with: "")); a wrong password: "
            + refusal
    }
}
