import Foundation
import Testing

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response whose connection closes cleanly before its `Content-Length` is reached: the connection was lost, as
/// NSURLConnection says (`URLError(.networkConnectionLost)`), not a malformed response; on every face, and a download
/// leaves no file.
struct URLConnectionTruncatedBodyTests {
    let server: TestServer

    init() async throws {
        server = try await TestServer.http()
    }

    @Test func theDelegateFaceGetsTheResponseThenNetworkConnectionLost() async throws {
        let delegate = RecordingDelegate()
        try await load(request(self.server.url("/short")), delegate: delegate)
        #expect(delegate.events.contains(.response(status: 200, expectedLength: 100)))
        #expect(delegate.events.last == .failed(.networkConnectionLost))
        #expect(delegate.lastError?.failingURL == self.server.url("/short"))
    }

    @Test func dataForThrowsNetworkConnectionLost() async throws {
        await expectURLError(.networkConnectionLost) {
            _ = try await URLConnection.data(for: request(self.server.url("/short")), configuration: .uncached)
        }
    }

    @Test func aDownloadThrowsNetworkConnectionLostAndLeavesNoFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-short-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        await expectURLError(.networkConnectionLost) {
            _ = try await URLConnection.download(
                request(self.server.url("/short")),
                to: directory.appendingPathComponent("file.txt"),
                configuration: .uncached
            )
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }
}
