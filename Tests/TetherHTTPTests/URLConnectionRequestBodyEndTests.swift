import AsyncHTTPClient
import Foundation
import Testing
import TetherConcurrency

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request body's end and the connection it went out on.
struct URLConnectionRequestBodyEndTests {
    @Test func aConnectionIsReusedAfterAResponseThatEndedBeforeTheBodyStreamFoundItsEnd() async throws {
        // A server answers once the Content-Length bytes arrived. The body stream here finds its end (a read that
        // returns 0) only after the response reached the delegate: the engine must know of the body's end with its
        // last byte, else it finishes the request but keeps its connection leased for good. With one connection per
        // host, the next request then waits for a connection until its timeout.
        var settings = HTTPEngine.makeConfiguration(decompressionLimit: nil)
        settings.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 1
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: settings)
        let configuration = URLConnection.Configuration(responseCache: nil, httpClient: client)
        let origin = try await ScriptedOrigin.start { _ in .init(200, [], "OK") }
        let stream = GatedInputStream(bytes: Array("some body".utf8))
        var upload = request(origin.url("/upload"), method: "PUT", timeout: 5)
        upload.httpBodyStream = stream
        upload.setValue("9", forHTTPHeaderField: "Content-Length")
        let delegate = RecordingDelegate()
        delegate.onResponse = { _, _ in stream.openGate() }
        try await load(upload, delegate: delegate, configuration: configuration)
        #expect(delegate.events.last == .finished)

        let (data, response) = try await URLConnection.data(
            for: request(origin.url("/next"), timeout: 5),
            configuration: configuration
        )
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(data == Data("OK".utf8))
        #expect(origin.requests.map(\.path) == ["/upload", "/next"])
        await origin.stop()
        try await client.shutdown()
    }
}
