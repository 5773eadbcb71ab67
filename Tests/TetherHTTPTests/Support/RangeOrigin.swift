import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import TetherConcurrency

/// An in-process origin on 127.0.0.1 that serves one resource with byte ranges (`Range: bytes=N-`, `If-Range`) as
/// RFC 9110 §14 says, and misbehaves on request: it cuts a body after some bytes, stalls, ignores `If-Range`, or
/// starts its `Content-Range` at the wrong byte. The test swaps the resource between requests.
final class RangeOrigin: Sendable {
    /// The resource and its validators.
    struct Resource: Sendable {
        var body: [UInt8]
        var etag: String?
        var lastModified: String?
    }

    /// How one answer goes wrong.
    enum Fault: Sendable {
        /// A correct answer.
        case none
        /// Head and the first `bytes` bytes of the payload, then the connection closes.
        case cut(after: Int)
        /// Head and the first `bytes` bytes, then silence.
        case stall(after: Int)
        /// Answers a range whatever `If-Range` says (a 206 of whatever the resource is now).
        case ignoreIfRange
        /// A 206 whose `Content-Range` starts one byte later than asked (and whose payload does too).
        case wrongStart
    }

    /// What the origin holds: the resource, the requests so far, the connections to close when it stops.
    struct State: Sendable {
        var resource: Resource
        var requests: [Request] = []
        var connections: [any Channel] = []
    }

    /// A request as received: its `Range` and `If-Range`.
    struct Request: Sendable, Equatable {
        var range: String?
        var ifRange: String?
    }

    let port: Int
    private let listener: any Channel
    private let state: LockedBox<State>

    /// Starts an origin for `resource`; `fault` decides each answer from the
    /// request and the resource's length (called on an event loop, in request order).
    static func start(
        _ resource: Resource,
        fault: @escaping @Sendable (Request, Int) -> Fault
    ) async throws -> RangeOrigin {
        let state = LockedBox(State(resource: resource))
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                state.withLock { $0.connections.append(channel) }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(RangeOriginHandler(state: state, fault: fault))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = listener.localAddress?.port else { throw POSIXError(.EADDRNOTAVAIL) }
        return RangeOrigin(port: port, listener: listener, state: state)
    }

    private init(
        port: Int,
        listener: any Channel,
        state: LockedBox<State>
    ) {
        self.port = port
        self.listener = listener
        self.state = state
    }

    var url: URL { URL(string: "http://127.0.0.1:\(self.port)/resource")! }

    /// The resource served now; setting it changes what the next request gets.
    var resource: Resource {
        get { self.state.withLock { $0.resource } }
        set { self.state.withLock { $0.resource = newValue } }
    }

    /// Every request so far, in order.
    var requests: [Request] { self.state.withLock { $0.requests } }

    func stop() async {
        try? await self.listener.close()
        for connection in self.state.withLock({ $0.connections }) { try? await connection.close() }
    }

    /// What a correct origin answers `request` with, given `resource`: status, headers and payload.
    static func answer(
        _ request: Request,
        resource: Resource,
        ignoringIfRange: Bool
    ) -> (status: HTTPResponseStatus, headers: HTTPHeaders, payload: ArraySlice<UInt8>) {
        var headers = HTTPHeaders()
        if let etag = resource.etag { headers.add(name: "ETag", value: etag) }
        if let lastModified = resource.lastModified { headers.add(name: "Last-Modified", value: lastModified) }
        let length = resource.body.count
        let validatorMatches =
            request.ifRange == nil || ignoringIfRange
            || (request.ifRange == resource.etag && !(resource.etag ?? "").hasPrefix("W/"))
            || request.ifRange == resource.lastModified
        if let range = request.range, validatorMatches, range.hasPrefix("bytes="), range.hasSuffix("-"),
            let first = Int(range.dropFirst(6).dropLast())
        {
            guard first < length else {
                headers.add(name: "Content-Range", value: "bytes */\(length)")
                return (.rangeNotSatisfiable, headers, [])
            }
            headers.add(name: "Content-Range", value: "bytes \(first)-\(length - 1)/\(length)")
            return (.partialContent, headers, resource.body[first...])
        }
        return (.ok, headers, resource.body[...])
    }
}

/// Runs `body` with a ``RangeOrigin`` whose answers go wrong as `faults` says, in request order (then right), stopped
/// afterwards whether `body` threw or not.
func withRangeOrigin<T: Sendable>(
    _ resource: RangeOrigin.Resource,
    faults: [RangeOrigin.Fault] = [],
    _ body: (RangeOrigin) async throws -> T
) async throws -> T {
    let remaining = LockedBox(faults)
    let origin = try await RangeOrigin.start(resource) { _, _ in
        remaining.withLock { $0.isEmpty ? .none : $0.removeFirst() }
    }
    do {
        let result = try await body(origin)
        await origin.stop()
        return result
    } catch {
        await origin.stop()
        throw error
    }
}
