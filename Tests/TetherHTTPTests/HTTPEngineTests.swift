import AsyncHTTPClient
import NIOPosix
import Testing

@testable import TetherHTTP

/// The shared engines under `URLConnection`.
struct HTTPEngineTests {
    @Test func anEngineIsSharedPerSettingsAndTracesNothingWithoutABootstrappedTracer() throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let limit = URLConnection.Configuration.default.decompressionLimit
        let plain = try #require(
            HTTPEngine.client(eventLoopGroup: group, tlsConfiguration: nil, decompressionLimit: limit)
        )
        #expect(HTTPEngine.client(eventLoopGroup: group, tlsConfiguration: nil, decompressionLimit: limit) === plain)
        #expect(HTTPEngine.client(eventLoopGroup: group, tlsConfiguration: nil, decompressionLimit: nil) !== plain)
        #expect(HTTPEngine.client(eventLoopGroup: group, tlsConfiguration: nil, decompressionLimit: 1_000) !== plain)
        // The process bootstraps no tracer: the engine skips AsyncHTTPClient's span calls.
        #expect(plain.tracer == nil)
    }
}
