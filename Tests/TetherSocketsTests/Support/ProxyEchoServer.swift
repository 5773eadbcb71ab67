import NIOCore
import TetherSockets

/// An echo server on the async face for the proxy tests: one port on 127.0.0.1 and on ::1 (a proxy may resolve
/// `localhost` to either), optionally with TLS; each connection echoes until the peer closes.
struct ProxyEchoServer: Sendable {
    let listeners: [TCPListener]
    let tasks: [Task<Void, any Error>]

    var port: Int { listeners[0].localPort }

    static func start(tls: TLSSettings? = nil) async throws -> ProxyEchoServer {
        let first = try await TCPListener.bind(host: "127.0.0.1", port: 0, tls: tls)
        var listeners = [first]
        if let second = try? await TCPListener.bind(host: "::1", port: first.localPort, tls: tls) {
            listeners.append(second)
        }
        let tasks = listeners.map { listener in
            Task {
                try await withThrowingDiscardingTaskGroup { group in
                    for try await connection in listener.connections {
                        group.addTask {
                            while let bytes = try? await connection.readAvailable() {
                                try await connection.write(bytes)
                            }
                            try? await connection.close()
                        }
                    }
                }
            }
        }
        return ProxyEchoServer(listeners: listeners, tasks: tasks)
    }

    func stop() async {
        for listener in listeners { try? await listener.close() }
        for task in tasks { task.cancel() }
    }
}
