import ArgumentParser
import Foundation
import TetherConcurrency
import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#endif

/// `-o FILE` and `--continue`: a download that a cut, an error or Ctrl-C leaves resumable, with its resume data kept
/// as JSON beside the file (`FILE.tether-resume`), so that a later process continues it as curl's `-C -` does.
extension GetCommand {
    /// The file beside `destination` that keeps a cut download's resume data.
    static func resumeFile(for destination: URL) -> URL {
        destination.deletingLastPathComponent().appendingPathComponent(destination.lastPathComponent + ".tether-resume")
    }

    /// Downloads to `output`: with `--continue`, from the resume data an earlier run left beside it; else from the
    /// start, removing what an earlier run left.
    /// - Throws: `ExitCode` 1 on failure (after saying why), 130/143 when interrupted.
    func download(
        _ request: URLRequest,
        to output: String,
        configuration: URLConnection.Configuration,
        progress: (@Sendable (DownloadProgress) -> Void)?
    ) async throws -> HTTPURLResponse {
        let destination = URL(fileURLWithPath: output)
        let resumeFile = Self.resumeFile(for: destination)
        var resumeData: DownloadResumeData?
        if let stored = try? Data(contentsOf: resumeFile) {
            guard let decoded = try? JSONDecoder().decode(DownloadResumeData.self, from: stored) else {
                Terminal.error("error: \(resumeFile.path) holds no resume data; remove it to download from the start")
                throw ExitCode.failure
            }
            if self.continueDownload {
                resumeData = decoded
            } else {
                // A download from the start: what an earlier run kept goes.
                try? FileManager.default.removeItem(at: decoded.partialFile)
                try? FileManager.default.removeItem(at: resumeFile)
            }
        }
        let download = Task {
            try await URLConnection.download(
                request,
                to: destination,
                resumingWith: resumeData,
                configuration: configuration,
                progress: progress
            )
        }
        let interruption = LockedBox<Int32?>(nil)
        Terminal.onSignals { signalNumber in
            interruption.withLock { $0 = $0 ?? signalNumber }
            download.cancel()
        }
        do {
            let response = try await download.value
            try? FileManager.default.removeItem(at: resumeFile)
            return response
        } catch let error as URLError {
            if let kept = error.downloadResumeData {
                try JSONEncoder().encode(kept).write(to: resumeFile, options: .atomic)
                Terminal.error("error: \(error.localizedDescription) (\(Self.withoutPassword(self.url)))")
                Terminal.error("kept \(kept.bytesReceived) bytes: --continue resumes the download")
            } else {
                try? FileManager.default.removeItem(at: resumeFile)
                Terminal.error("error: \(error.localizedDescription) (\(Self.withoutPassword(self.url)))")
                if let reason = error.downloadNotResumableReason, error.code != .badURL {
                    Terminal.error("not resumable: \(reason)")
                }
            }
            if let signalNumber = interruption.withLock({ $0 }) { throw ExitCode(signalNumber == SIGINT ? 130 : 143) }
            throw ExitCode.failure
        }
    }
}
