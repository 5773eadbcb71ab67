import Foundation
import Testing
import TetherConcurrency

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `URLConnectionDownload`, the delegate face of downloads: progress, a resumption and the end reach the delegate
/// on its queue, in order; a cancel hands over resume data.
@Suite(.timeLimit(.minutes(1)))
struct URLConnectionDownloadDelegateTests {
    /// Records what the download tells it.
    final class Recorder: URLConnectionDownloadDelegate, @unchecked Sendable {
        // Sendable: its state is behind a lock.
        enum Event: Equatable, Sendable {
            case resumed(offset: Int64, expected: Int64?)
            case wrote(total: Int64)
            case finished(status: Int)
            case failed(URLError.Code)
        }

        let events = LockedBox<[Event]>([])
        let lastError = LockedBox<URLError?>(nil)
        let end = Signal<Void>()
        let firstWrite = Signal<Void>()

        func download(_ download: URLConnectionDownload, didResumeAtOffset offset: Int64, expectedTotalBytes: Int64?) {
            self.events.withLock { $0.append(.resumed(offset: offset, expected: expectedTotalBytes)) }
        }

        func download(
            _ download: URLConnectionDownload,
            didWriteData bytesWritten: Int64,
            totalBytesWritten: Int64,
            expectedTotalBytes: Int64?
        ) {
            self.events.withLock { $0.append(.wrote(total: totalBytesWritten)) }
            self.firstWrite.fulfil(())
        }

        func download(
            _ download: URLConnectionDownload,
            didFinishDownloadingTo destination: URL,
            response: HTTPURLResponse
        ) {
            self.events.withLock { $0.append(.finished(status: response.statusCode)) }
            self.end.fulfil(())
        }

        func download(_ download: URLConnectionDownload, didFailWithError error: URLError) {
            self.events.withLock { $0.append(.failed(error.code)) }
            self.lastError.withLock { $0 = error }
            self.end.fulfil(())
        }
    }

    private func makeDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-dld-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    private static func serialQueue() -> OperationQueue {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        return queue
    }

    @Test func aCutDownloadFailsWithResumeDataAndASecondOneResumesIt() async throws {
        let directory = try self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("file.bin")
        let resource = URLConnectionResumeTests.v1
        try await withRangeOrigin(resource, faults: [.cut(after: 8000)]) { origin in
            let cut = Recorder()
            URLConnectionDownload(
                request: request(origin.url),
                to: destination,
                configuration: .uncached,
                delegate: cut,
                queue: Self.serialQueue()
            ).start()
            try await cut.end.wait()
            #expect(cut.events.withLock { $0.last } == .failed(.networkConnectionLost))
            let resumeData = try #require(cut.lastError.withLock { $0 }?.downloadResumeData)

            let resumed = Recorder()
            URLConnectionDownload(
                request: request(origin.url),
                to: destination,
                resumingWith: resumeData,
                configuration: .uncached,
                delegate: resumed,
                queue: Self.serialQueue()
            ).start()
            try await resumed.end.wait()
            let events = resumed.events.withLock { $0 }
            #expect(events.first == .resumed(offset: 8000, expected: 20_000))
            #expect(events.dropFirst().dropLast().allSatisfy { if case .wrote = $0 { true } else { false } })
            #expect(events.dropLast().last == .wrote(total: 20_000))
            #expect(events.last == .finished(status: 206))
            #expect(try Data(contentsOf: destination) == Data(resource.body))
        }
    }

    @Test func cancellingByProducingResumeDataKeepsThePartialFileAndTellsTheDelegateNothing() async throws {
        let directory = try self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("file.bin")
        try await withRangeOrigin(URLConnectionResumeTests.v1, faults: [.stall(after: 5000)]) { origin in
            let recorder = Recorder()
            let download = URLConnectionDownload(
                request: request(origin.url),
                to: destination,
                configuration: .uncached,
                delegate: recorder,
                queue: Self.serialQueue()
            )
            download.start()
            try await recorder.firstWrite.wait()
            let produced = Signal<DownloadResumeData?>()
            download.cancel { produced.fulfil($0) }
            let resumeData = try #require(try await produced.wait())
            #expect(resumeData.bytesReceived > 0)
            #expect(FileManager.default.fileExists(atPath: resumeData.partialFile.path))
            #expect(recorder.events.withLock { $0 }.allSatisfy { if case .wrote = $0 { true } else { false } })
        }
    }
}
