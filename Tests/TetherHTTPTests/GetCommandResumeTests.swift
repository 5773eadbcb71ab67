import Foundation
import Testing
import TetherConcurrency
import TetherTestSupport

/// `tether get -o FILE --continue`, run as a user would: a cut download keeps its resume data beside the file, and a
/// later process continues it.
@Suite(.timeLimit(.minutes(1)))
struct GetCommandResumeTests {
    @Test func continueResumesADownloadThatAnEarlierProcessLeftCut() async throws {
        let tether = try BuiltProduct.require("tether")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-get-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("file.bin")
        let resource = URLConnectionResumeTests.v1
        try await withRangeOrigin(resource, faults: [.cut(after: 6000)]) { origin in
            let cut = try await CommandRun.run(
                tether,
                ["get", "--no-cache", "-o", file.path, origin.url.absoluteString]
            )
            #expect(cut.status == 1)
            #expect(cut.errors.contains("kept 6000 bytes: --continue resumes the download"), "\(cut.errors)")
            #expect(FileManager.default.fileExists(atPath: file.path + ".tether-resume"))
            #expect(!FileManager.default.fileExists(atPath: file.path))

            let resumed = try await CommandRun.run(
                tether,
                ["get", "--no-cache", "-o", file.path, "--continue", origin.url.absoluteString]
            )
            #expect(resumed.status == 0, "\(resumed.errors)")
            #expect(resumed.errors.contains("HTTP 206 20000 bytes"), "\(resumed.errors)")
            #expect(try Data(contentsOf: file) == Data(resource.body))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["file.bin"])
            #expect(origin.requests.map(\.range) == [nil, "bytes=6000-"])
        }
    }

    @Test func continueWithoutAFileIsRefused() async throws {
        let tether = try BuiltProduct.require("tether")
        let run = try await CommandRun.run(tether, ["get", "--continue", "http://127.0.0.1:1/file"])
        #expect(run.status != 0)
        #expect(run.errors.contains("--continue needs -o FILE."), "\(run.errors)")
    }
}
