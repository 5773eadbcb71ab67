import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The engine under `URLConnection`: shared per event loop group and decompression settings (TLS settings and
/// timeouts travel with each load), or the one the configuration gives.
@Suite(.serialized)
struct HTTPEngineTests {
    @Test func anEngineIsSharedPerGroupAndDecompressionAndTracesNothingWithoutABootstrappedTracer() {
        let plain = HTTPEngine.client(for: .default)
        #expect(HTTPEngine.client(for: .default) === plain)
        #expect(
            HTTPEngine.client(for: URLConnection.Configuration(tlsConfiguration: .makeClientConfiguration())) === plain
        )
        #expect(HTTPEngine.client(for: URLConnection.Configuration(decompressesResponses: false)) !== plain)
        #expect(HTTPEngine.client(for: URLConnection.Configuration(maximumDecodedBodySize: 1_000)) !== plain)
        // The process bootstraps no tracer: the engine skips AsyncHTTPClient's span calls.
        #expect(plain.tracer == nil)
    }

    @Test func aGivenEngineCarriesTheLoadsWithItsOwnSettings() async throws {
        let server = try await TestServer.http()
        // Tether would decode the gzip body; the given engine does not decode, and its settings win.
        var settings = HTTPClient.Configuration(redirectConfiguration: .disallow)
        settings.decompression = .disabled
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: settings)
        let configuration = URLConnection.Configuration(responseCache: nil, httpClient: client)
        #expect(HTTPEngine.client(for: configuration) === client)
        let (data, response) = try await URLConnection.data(
            for: URLRequest(url: server.url("/gzip")),
            configuration: configuration
        )
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        #expect(data.starts(with: [0x1F, 0x8B]))
        try await client.shutdown()
        // A load on an engine that was shut down fails; it does not hang.
        await #expect(throws: URLError.self) {
            _ = try await URLConnection.data(for: URLRequest(url: server.url("/gzip")), configuration: configuration)
        }
    }

    @Test func theSharedEnginesOfAGroupShutDownAndTheNextLoadMakesANewOne() async throws {
        let server = try await TestServer.http()
        // A group of its own: the other tests' engines (on the singleton group) are not touched.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let configuration = URLConnection.Configuration(eventLoopGroup: group, responseCache: nil)
        let before = HTTPEngine.client(for: configuration)
        _ = try await URLConnection.data(for: URLRequest(url: server.url("/gzip")), configuration: configuration)
        try await URLConnection.shutdownSharedEngines(on: group)
        let (data, _) = try await URLConnection.data(
            for: URLRequest(url: server.url("/gzip")),
            configuration: configuration
        )
        #expect(!data.isEmpty)
        #expect(HTTPEngine.client(for: configuration) !== before)
        try await URLConnection.shutdownSharedEngines(on: group)
        try await group.shutdownGracefully()
    }
}
