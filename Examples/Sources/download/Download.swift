// download: a download through `URLConnection`'s delegate (NSURLConnection's), with a progress bar on stderr.
//
//   download URL --output FILE
//
// The delegate hears the response (its status and `expectedContentLength`), then the body in chunks, then exactly
// one of `connectionDidFinishLoading` and `connection(_:didFailWithError:)`, on the operation queue it was given.
// The chunks go to FILE.part, renamed to FILE at the end: FILE is never half written. A status outside 200...299 or
// an error removes the part file, says why on stderr and exits 1.
import ArgumentParser
import Dispatch
import Foundation
import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@main
struct Download: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "download",
        abstract: "Download a URL to a file through URLConnection, with a progress bar."
    )

    @Argument(help: "The http or https URL.")
    var url: String

    @Option(name: .shortAndLong, help: "The file to write.")
    var output: String

    func validate() throws {
        guard let parsed = URL(string: url), URLConnection.canHandle(URLRequest(url: parsed)) else {
            throw ValidationError("not an http(s) URL with a host: \(url)")
        }
    }

    func run() throws {
        let downloader = Downloader(destination: URL(fileURLWithPath: output))
        do {
            let size = try downloader.run(URLRequest(url: URL(string: url)!))
            printError("saved \(size) bytes to \(output)")
        } catch let error as URLError {
            printError("error: \(error.localizedDescription) (\(error.failingURL?.absoluteString ?? url))")
            throw ExitCode.failure
        } catch {
            printError("error: \(error)")
            throw ExitCode.failure
        }
    }
}

/// The connection's delegate: writes the body to a part file and draws the progress bar.
final class Downloader: URLConnectionDataDelegate {
    let destination: URL
    let partial: URL
    private var bar = ProgressBar()
    private let done = DispatchSemaphore(value: 0)
    // Touched only in delegate calls (one at a time, on the queue), and read after `done` is signalled.
    private var file: FileHandle?
    private var expected: Int64 = -1
    private var received: Int64 = 0
    private var failure: (any Error)?

    init(destination: URL) {
        self.destination = destination
        self.partial = destination.appendingPathExtension("part")
    }

    /// Loads `request` and returns the number of bytes saved, once the load is over.
    func run(_ request: URLRequest) throws -> Int64 {
        let connection = URLConnection(request: request, delegate: self, startImmediately: false)!
        // Delegate calls go to this queue, one operation per call. (Without it they would go to the run loop current
        // here, which would have to run.)
        connection.setDelegateQueue(OperationQueue())
        connection.start()
        done.wait()
        if let failure { throw failure }
        return received
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200...299).contains(status) else {
            connection.cancel()  // no delegate call follows a cancel
            return finish(DownloadFailure(description: "HTTP \(status) from \(response.url?.absoluteString ?? "?")"))
        }
        expected = response.expectedContentLength  // -1 when the server did not say (no Content-Length)
        guard FileManager.default.createFile(atPath: partial.path, contents: nil),
            let handle = FileHandle(forWritingAtPath: partial.path)
        else {
            connection.cancel()
            return finish(DownloadFailure(description: "cannot write \(partial.path)"))
        }
        file = handle
        bar.draw(received: 0, expected: expected)
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        do {
            try file?.write(contentsOf: data)
        } catch {
            connection.cancel()
            return finish(error)
        }
        received += Int64(data.count)
        bar.draw(received: received, expected: expected)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        do {
            try file?.close()
            file = nil
            // rename(2): atomic, and it replaces an older FILE.
            guard rename(partial.path, destination.path) == 0 else {
                throw DownloadFailure(description: "cannot rename \(partial.path): \(String(cString: strerror(errno)))")
            }
            finish(nil)
        } catch {
            finish(error)
        }
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        finish(error)  // a URLError with the failing URL
    }

    private func finish(_ error: (any Error)?) {
        bar.end()
        if let error {
            try? file?.close()
            try? FileManager.default.removeItem(at: partial)
            failure = error
        }
        done.signal()
    }
}

struct DownloadFailure: Error, CustomStringConvertible {
    var description: String
}

/// `[###############               ] 50% (1048576 of 2097152 bytes)` on stderr, redrawn in place (`\r`) each time
/// the percentage changes; only the byte count when the length is unknown.
struct ProgressBar {
    private let width = 30
    private var lastPercent: Int?
    private var hasDrawn = false

    mutating func draw(received: Int64, expected: Int64) {
        guard expected > 0 else {
            return write("\r\(received) bytes")
        }
        let percent = Int(min(1, Double(received) / Double(expected)) * 100)
        guard percent != lastPercent else { return }
        lastPercent = percent
        let filled = percent * width / 100
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        write("\r[\(bar)] \(percent)% (\(received) of \(expected) bytes)")
    }

    /// Ends the bar's line, if there is one.
    func end() {
        if hasDrawn { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    private mutating func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
        hasDrawn = true
    }
}

/// Writes a line to standard error.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
