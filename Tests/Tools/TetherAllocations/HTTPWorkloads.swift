import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One keep-alive GET of 1 KiB: raw AsyncHTTPClient, `URLConnection.data(for:)`, and the delegate face on an
/// operation queue.
enum HTTPWorkloads {
    static func url(_ peers: PeerServers) -> URL { URL(string: "http://127.0.0.1:\(peers.httpPort)/small")! }

    /// AsyncHTTPClient with the settings of Tether's engine: no redirects, decompression on.
    static func asyncHTTPClient(_ peers: PeerServers) -> Workload {
        Workload {
            var configuration = HTTPClient.Configuration(
                redirectConfiguration: .disallow,
                timeout: .init(connect: .seconds(75)),
                decompression: .enabled(limit: .ratio(25))
            )
            configuration.connectionPool.retryConnectionEstablishment = false
            let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
            let url = url(peers).absoluteString
            return WorkloadSession(
                operation: {
                    let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(60))
                    guard response.status == .ok else { throw HarnessError("HTTP \(response.status)") }
                    let body = try await response.body.collect(upTo: 1 << 20)
                    try check(body.readableBytes)
                },
                end: { try await client.shutdown() }
            )
        }
    }

    static func dataForRequest(_ peers: PeerServers) -> Workload {
        Workload {
            let request = URLRequest(url: url(peers))
            return WorkloadSession {
                let (data, response) = try await URLConnection.data(for: request)
                guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw HarnessError("not 200") }
                try check(data.count)
            }
        }
    }

    static func delegateFace(_ peers: PeerServers) -> Workload {
        Workload {
            let request = URLRequest(url: url(peers))
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            return WorkloadSession {
                let count = try await HTTPBodyDelegate.load(request, queue: queue)
                try check(count)
            }
        }
    }

    private static func check(_ count: Int) throws {
        guard count == HTTPPeerHandler.bodyLength else { throw HarnessError("a body of \(count) bytes") }
    }
}
