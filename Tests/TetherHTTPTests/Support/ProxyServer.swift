import Foundation
import TetherTestSupport

/// The test proxy (Tests/Tools/proxy.py): an HTTP proxy and a SOCKS5 proxy on loopback, in a child Python process
/// that logs one line per proxied request and ends when this object goes away.
final class ProxyServer: Sendable {
    let httpPort: Int
    let socksPort: Int
    private let process: ChildProcess
    private let stdin: Pipe
    private let lines: NSCondition
    // Sendable: `log` is only touched under `lines`.
    private nonisolated(unsafe) var log: [String] = []

    static let scriptPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tools/proxy.py").path

    /// Starts a proxy; with `auth` (`user:password`) the HTTP proxy wants those credentials.
    init(auth: String? = nil) throws {
        try SystemRequirements.tool("python3", for: "the proxy tests' HTTP and SOCKS5 proxy")
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", Self.scriptPath] + (auth.map { ["--auth", $0] } ?? [])
        let stdout = Pipe()
        let stdin = Pipe()
        process.standardOutput = stdout
        process.standardInput = stdin
        try process.run()
        let reader = stdout.fileHandleForReading
        var first = Data()
        while true {
            let byte = reader.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            first.append(byte)
        }
        let words = String(decoding: first, as: UTF8.self).split(separator: " ")
        guard words.count == 3, words[0] == "ports", let http = Int(words[1]), let socks = Int(words[2]) else {
            throw POSIXError(.EIO)
        }
        (httpPort, socksPort) = (http, socks)
        self.process = process
        self.stdin = stdin
        self.lines = NSCondition()
        let thread = Thread { [lines = self.lines, weak self] in
            var pending = Data()
            while true {
                let chunk = reader.nextChunk()
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let end = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[pending.startIndex..<end], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...end)
                    lines.lock()
                    self?.log.append(line)
                    lines.broadcast()
                    lines.unlock()
                }
            }
        }
        thread.start()
    }

    deinit {
        try? stdin.fileHandleForWriting.close()
        process.terminate()
    }

    /// Waits (off the cooperative pool) until the proxy logged a line starting with `prefix`; returns it, or nil
    /// after `timeout`.
    func logged(_ prefix: String, timeout: TimeInterval = 20) async -> String? {
        await withCheckedContinuation { continuation in
            Thread {
                let deadline = Date().addingTimeInterval(timeout)
                self.lines.lock()
                defer { self.lines.unlock() }
                while true {
                    if let line = self.log.first(where: { $0.hasPrefix(prefix) }) {
                        continuation.resume(returning: line)
                        return
                    }
                    if !self.lines.wait(until: deadline) {
                        continuation.resume(returning: nil)
                        return
                    }
                }
            }.start()
        }
    }

    /// Every line logged so far.
    var logLines: [String] {
        lines.lock()
        defer { lines.unlock() }
        return log
    }
}
