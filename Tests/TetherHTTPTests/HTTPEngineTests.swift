import AsyncHTTPClient
import NIOPosix
import Testing

@testable import TetherHTTP

/// The shared engines under `URLConnection`.
struct HTTPEngineTests {
    @Test func anEngineIsSharedPerSettingsAndTracesNothingWithoutABootstrappedTracer() throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let plain = try #require(HTTPEngine.client(eventLoopGroup: group, tlsConfiguration: nil, decompresses: true))
        #expect(HTTPEngine.client(eventLoopGroup: group, tlsConfiguration: nil, decompresses: true) === plain)
        #expect(HTTPEngine.client(eventLoopGroup: group, tlsConfiguration: nil, decompresses: false) !== plain)
        // The process bootstraps no tracer: the engine skips AsyncHTTPClient's span calls.
        #expect(plain.tracer == nil)
    }
}
