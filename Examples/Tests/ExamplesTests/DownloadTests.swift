import Foundation
import Testing

/// download: against Python's `http.server` on 127.0.0.1, serving a folder the test fills.
@Suite(.timeLimit(.minutes(1)))
struct DownloadTests {
    /// A static file server on an ephemeral loopback port, and its port (from its first line).
    static func startServer(serving folder: URL) async throws -> (Example, Int) {
        let python = try #require(which("python3"), "these tests need python3 (its http.server serves the files)")
        // -u: its "Serving HTTP on 127.0.0.1 port N (…)" line is written at once, not when a buffer fills.
        let server = try Example(
            executable: python,
            ["-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", folder.path],
            name: "python3 -m http.server"
        )
        let line = try await server.line("the server's first line") { $0.hasPrefix("Serving HTTP on") }
        let words = line.split(separator: " ")
        let port = try #require(words.firstIndex(of: "port").flatMap { Int(words[$0 + 1]) }, "no port in: \(line)")
        return (server, port)
    }

    /// `count` bytes of a fixed pseudo-random sequence (xorshift), so that a misplaced chunk cannot go unnoticed.
    static func bytes(count: Int) -> Data {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var data = Data(capacity: count)
        for _ in 0..<count {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            data.append(UInt8(truncatingIfNeeded: state))
        }
        return data
    }

    @Test func theFileHoldsExactlyTheServedBytesAndTheBarReaches100Percent() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let served = Self.bytes(count: 3 << 20)
        try served.write(to: folder.appendingPathComponent("blob.bin"))
        let (server, port) = try await Self.startServer(serving: folder)
        defer { server.stop() }

        let output = folder.appendingPathComponent("downloaded.bin")
        let run = try Example("download", ["http://127.0.0.1:\(port)/blob.bin", "--output", output.path])
        let (status, _, stderr) = try await run.finish()
        #expect(status == 0, "stderr: \(stderr)")
        #expect(try Data(contentsOf: output) == served)
        #expect(!FileManager.default.fileExists(atPath: output.path + ".part"))
        // The bar is redrawn in place: its states are on one line, separated by carriage returns.
        let bar = stderr.first?.split(separator: "\r") ?? []
        #expect(bar.first?.hasSuffix("] 0% (0 of 3145728 bytes)") == true, "stderr: \(stderr)")
        #expect(bar.last == "[##############################] 100% (3145728 of 3145728 bytes)")
        #expect(stderr.last == "saved 3145728 bytes to \(output.path)")
    }

    @Test func aMissingFileExitsOneAndLeavesNoFile() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, port) = try await Self.startServer(serving: folder)
        defer { server.stop() }

        let output = folder.appendingPathComponent("missing.bin")
        let run = try Example("download", ["http://127.0.0.1:\(port)/missing.bin", "-o", output.path])
        let (status, _, stderr) = try await run.finish()
        #expect(status == 1)
        #expect(stderr == ["error: HTTP 404 from http://127.0.0.1:\(port)/missing.bin"])
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(!FileManager.default.fileExists(atPath: output.path + ".part"))
    }

    @Test func aRefusedConnectionExitsOneWithTheReason() async throws {
        let refusing = try RefusingPort()
        defer { refusing.close() }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("tether-\(UUID().uuidString)")
        let url = "http://127.0.0.1:\(refusing.port)/file"
        let run = try Example("download", [url, "-o", output.path])
        let (status, _, stderr) = try await run.finish()
        #expect(status == 1)
        #expect(stderr.count == 1)
        #expect(stderr.first?.hasPrefix("error: ") == true)
        #expect(stderr.first?.hasSuffix("(\(url))") == true, "stderr: \(stderr)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }
}

/// The first executable `name` on the PATH.
func which(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
}
