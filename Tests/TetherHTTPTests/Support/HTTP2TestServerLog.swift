import NIOCore
import TetherConcurrency

/// What an ``HTTP2TestServer`` saw: the connections it accepted, the requests per path, and the requests of
/// `/together` waiting for the rest of their group.
final class HTTP2TestServerLog: Sendable {
    private struct State {
        var connections: [any Channel] = []
        var requests: [String: Int] = [:]
        var waiting: [@Sendable () -> Void] = []
    }

    private let state = LockedBox(State())

    /// The TCP connections accepted so far (each one TLS, then HTTP/2 or HTTP/1.1).
    var connectionCount: Int { self.state.withLock { $0.connections.count } }

    /// The accepted connections, to close when the server stops.
    var connections: [any Channel] { self.state.withLock { $0.connections } }

    /// The requests that arrived for `path` (without its query).
    func requests(to path: String) -> Int { self.state.withLock { $0.requests[path, default: 0] } }

    func accepted(_ connection: any Channel) {
        self.state.withLock { $0.connections.append(connection) }
    }

    func received(_ path: String) {
        self.state.withLock { $0.requests[path, default: 0] += 1 }
    }

    /// Holds `release` until `count` requests wait: then releases them all (a rendezvous that only concurrent
    /// requests pass; requests on one HTTP/1 connection would wait for each other forever).
    func meet(_ count: Int, release: @escaping @Sendable () -> Void) {
        let released: [@Sendable () -> Void] = self.state.withLock { state in
            state.waiting.append(release)
            guard state.waiting.count >= count else { return [] }
            defer { state.waiting = [] }
            return state.waiting
        }
        for release in released { release() }
    }
}
