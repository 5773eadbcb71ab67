import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTPCompression
import NIOSSL

/// The process-wide `HTTPClient`s, one per (event loop group, TLS configuration, decompression), created lazily
/// and never shut down. Redirects are disabled in the engine: Tether follows them itself.
enum HTTPEngine {
    private struct Key: Hashable {
        var group: ObjectIdentifier
        var tls: TLSKey?
        var decompresses: Bool
    }

    private struct TLSKey: Hashable {
        var configuration: TLSConfiguration
        static func == (lhs: TLSKey, rhs: TLSKey) -> Bool {
            lhs.configuration.bestEffortEquals(rhs.configuration)
        }
        func hash(into hasher: inout Hasher) {
            self.configuration.bestEffortHash(into: &hasher)
        }
    }

    private static let clients = NSLockedBox<[Key: HTTPClient]>([:])

    static func client(
        eventLoopGroup: any EventLoopGroup,
        tlsConfiguration: TLSConfiguration?,
        decompresses: Bool
    ) -> HTTPClient {
        let key = Key(
            group: ObjectIdentifier(eventLoopGroup as AnyObject),
            tls: tlsConfiguration.map(TLSKey.init),
            decompresses: decompresses
        )
        return self.clients.withLock { clients in
            if let client = clients[key] { return client }
            var configuration = HTTPClient.Configuration(
                tlsConfiguration: tlsConfiguration,
                redirectConfiguration: .disallow,
                timeout: .init(connect: .seconds(75)),
                decompression: decompresses ? .enabled(limit: .ratio(25)) : .disabled
            )
            // A refused connection must fail now, not after retries until the connect timeout.
            configuration.connectionPool.retryConnectionEstablishment = false
            let client = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
            clients[key] = client
            return client
        }
    }
}
