import Foundation
import Testing
import TetherConcurrency
import TetherTestSupport

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Resumable downloads against a real origin (``RangeOrigin``) that cuts bodies, changes the resource between
/// attempts and misanswers ranges: a finished file is always byte-identical to one version of the resource.
@Suite(.timeLimit(.minutes(2)))
struct URLConnectionResumeTests {
    static let v1 = RangeOrigin.Resource(body: Self.bytes(20_000, salt: 1), etag: "\"v1\"", lastModified: nil)
    static let v2 = RangeOrigin.Resource(body: Self.bytes(20_000, salt: 2), etag: "\"v2\"", lastModified: nil)

    static func bytes(_ count: Int, salt: UInt64) -> [UInt8] {
        var generator = SeededGenerator(seed: salt)
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    private func makeDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tether-resume-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    private func contents(of directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    /// Downloads and expects a failure carrying resume data.
    private func failingDownload(
        _ url: URL,
        to destination: URL,
        resumingWith resumeData: DownloadResumeData? = nil
    ) async throws -> URLError {
        do {
            _ = try await URLConnection.download(
                request(url),
                to: destination,
                resumingWith: resumeData,
                configuration: .uncached
            )
        } catch let error as URLError {
            return error
        }
        Issue.record("the download succeeded")
        throw URLError(.unknown)
    }

    @Test func aCutDownloadKeepsItsPartialFileAndResumesWithRangeAndIfRange() async throws {
        let directory = try self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("file.bin")
        try await withRangeOrigin(Self.v1, faults: [.cut(after: 7000)]) { origin in
            let error = try await self.failingDownload(origin.url, to: destination)
            #expect(error.code == .networkConnectionLost)
            let resumeData = try #require(error.downloadResumeData)
            #expect(resumeData.validator == .entityTag("\"v1\""))
            #expect(resumeData.bytesReceived == 7000)
            #expect(resumeData.expectedLength == 20_000)
            #expect(resumeData.url == origin.url)
            #expect(try Data(contentsOf: resumeData.partialFile) == Data(Self.v1.body.prefix(7000)))
            #expect(!FileManager.default.fileExists(atPath: destination.path))

            let response = try await URLConnection.download(
                request(origin.url),
                to: destination,
                resumingWith: resumeData,
                configuration: .uncached
            )
            #expect(response.statusCode == 206)
            #expect(try Data(contentsOf: destination) == Data(Self.v1.body))
            #expect(try self.contents(of: directory) == ["file.bin"])
            #expect(
                origin.requests == [.init(range: nil, ifRange: nil), .init(range: "bytes=7000-", ifRange: "\"v1\"")]
            )
        }
    }

    @Test func aResourceChangedBeforeTheResumptionIsDownloadedWhole() async throws {
        let directory = try self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("file.bin")
        try await withRangeOrigin(Self.v1, faults: [.cut(after: 5000)]) { origin in
            let resumeData = try #require(
                try await self.failingDownload(origin.url, to: destination).downloadResumeData
            )
            origin.resource = Self.v2
            let response = try await URLConnection.download(
                request(origin.url),
                to: destination,
                resumingWith: resumeData,
                configuration: .uncached
            )
            #expect(response.statusCode == 200)
            #expect(try Data(contentsOf: destination) == Data(Self.v2.body))
            #expect(try self.contents(of: directory) == ["file.bin"])
        }
    }

    @Test func aServerThatIgnoresIfRangeCannotSpliceTwoVersions() async throws {
        let directory = try self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("file.bin")
        try await withRangeOrigin(Self.v1, faults: [.cut(after: 5000), .ignoreIfRange]) { origin in
            let resumeData = try #require(
                try await self.failingDownload(origin.url, to: destination).downloadResumeData
            )
            // The same length, another version: only the 206's ETag tells.
            origin.resource = Self.v2
            _ = try await URLConnection.download(
                request(origin.url),
                to: destination,
                resumingWith: resumeData,
                configuration: .uncached
            )
            #expect(try Data(contentsOf: destination) == Data(Self.v2.body))
            #expect(origin.requests.map(\.range) == [nil, "bytes=5000-", nil])
            #expect(try self.contents(of: directory) == ["file.bin"])
        }
    }

    @Test func aRangeThatStartsElsewhereRestartsTheDownload() async throws {
        let directory = try self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("file.bin")
        try await withRangeOrigin(Self.v1, faults: [.cut(after: 5000), .wrongStart]) { origin in
            let resumeData = try #require(
                try await self.failingDownload(origin.url, to: destination).downloadResumeData
            )
            let response = try await URLConnection.download(
                request(origin.url),
                to: destination,
                resumingWith: resumeData,
                configuration: .uncached
            )
            #expect(response.statusCode == 200)
            #expect(try Data(contentsOf: destination) == Data(Self.v1.body))
            #expect(origin.requests.map(\.range) == [nil, "bytes=5000-", nil])
        }
    }

    @Test func aRangeBeyondTheResourceDiscardsThePartialFileAndDownloadsItWhole() async throws {
        let directory = try self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("file.bin")
        let partial = directory.appendingPathComponent(".file.bin.partial")
        try Data(repeating: 0x2A, count: 30_000).write(to: partial)
        try await withRangeOrigin(Self.v1) { origin in
            let resumeData = DownloadResumeData(
                url: origin.url,
                validator: .entityTag("\"v1\""),
                bytesReceived: 30_000,
                expectedLength: nil,
                partialFile: partial
            )
            let response = try await URLConnection.download(
                request(origin.url),
                to: destination,
                resumingWith: resumeData,
                configuration: .uncached
            )
            #expect(response.statusCode == 200)
            #expect(try Data(contentsOf: destination) == Data(Self.v1.body))
            #expect(origin.requests.map(\.range) == ["bytes=30000-", nil])
            #expect(try self.contents(of: directory) == ["file.bin"])
        }
    }

    @Test func aWeakTagMakesADownloadNotResumableAndLeavesNothing() async throws {
        let directory = try self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("file.bin")
        var weak = Self.v1
        weak.etag = "W/\"v1\""
        try await withRangeOrigin(weak, faults: [.cut(after: 5000)]) { origin in
            let error = try await self.failingDownload(origin.url, to: destination)
            #expect(error.code == .networkConnectionLost)
            #expect(error.downloadResumeData == nil)
            #expect(error.downloadNotResumableReason?.contains("weak") == true)
            #expect(try self.contents(of: directory).isEmpty)
        }
    }

    @Test func aResumptionThatFailsBeforeAnAnswerKeepsItsResumeData() async throws {
        let directory = try self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("file.bin")
        let origin = try await RangeOrigin.start(Self.v1, fault: { _, _ in .cut(after: 3000) })
        let resumeData = try #require(try await self.failingDownload(origin.url, to: destination).downloadResumeData)
        await origin.stop()
        let error = try await self.failingDownload(origin.url, to: destination, resumingWith: resumeData)
        #expect(error.code == .cannotConnectToHost)
        #expect(error.downloadResumeData == resumeData)
        #expect(try Data(contentsOf: resumeData.partialFile) == Data(Self.v1.body.prefix(3000)))
        try? FileManager.default.removeItem(at: resumeData.partialFile)
    }

    @Test func aCancelledDownloadYieldsResumeDataThatFinishesIt() async throws {
        let directory = try self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("file.bin")
        try await withRangeOrigin(Self.v1, faults: [.stall(after: 4000)]) { origin in
            let (written, continuation) = AsyncStream.makeStream(of: Int64.self)
            let download = Task {
                try await URLConnection.download(request(origin.url), to: destination, configuration: .uncached) {
                    continuation.yield($0.totalBytesWritten)
                }
            }
            // The first report comes with the first bytes written.
            var firstTotal: Int64 = 0
            for await total in written {
                firstTotal = total
                break
            }
            download.cancel()
            let error = try #require(await #expect(throws: URLError.self) { try await download.value })
            #expect(error.code == .cancelled)
            let resumeData = try #require(error.downloadResumeData)
            #expect(resumeData.bytesReceived >= firstTotal && resumeData.bytesReceived <= 4000)
            let partial = try Data(contentsOf: resumeData.partialFile)
            #expect(partial == Data(Self.v1.body.prefix(Int(resumeData.bytesReceived))))
            _ = try await URLConnection.download(
                request(origin.url),
                to: destination,
                resumingWith: resumeData,
                configuration: .uncached
            )
            #expect(try Data(contentsOf: destination) == Data(Self.v1.body))
            #expect(try self.contents(of: directory) == ["file.bin"])
        }
    }

    @Test func resumeDataForAnotherURLIsRefused() async throws {
        let resumeData = DownloadResumeData(
            url: URL(string: "http://127.0.0.1:1/other")!,
            validator: .entityTag("\"v1\""),
            bytesReceived: 1,
            expectedLength: nil,
            partialFile: URL(fileURLWithPath: "/nonexistent/partial")
        )
        let error = await #expect(throws: URLError.self) {
            _ = try await URLConnection.download(
                request(URL(string: "http://127.0.0.1:1/file")!),
                to: URL(fileURLWithPath: "/nonexistent/file"),
                resumingWith: resumeData,
                configuration: .uncached
            )
        }
        #expect(error?.code == .badURL)
    }

    @Test func theArticlesLoopFinishesADownloadCutTwice() async throws {
        let directory = try self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("file.bin")
        try await withRangeOrigin(Self.v1, faults: [.cut(after: 3000), .cut(after: 4000)]) { origin in
            let response = try await downloadResuming(origin.url, to: destination, attempts: 3)
            #expect(response.statusCode == 206)
            #expect(try Data(contentsOf: destination) == Data(Self.v1.body))
            #expect(origin.requests.map(\.range) == [nil, "bytes=3000-", "bytes=7000-"])
        }
    }
}
