import Foundation
import Testing
import TetherTestSupport

/// `tether serve --notes` and `tether notes … --remote`, run as a user would, on loopback.
@Suite("tether serve --notes, and tether notes --remote and watch against it", .timeLimit(.minutes(1)))
struct NotesCommandTests {
    /// A child `tether` whose output the test reads line by line.
    final class Running: Sendable {
        let process: ChildProcess
        let output: Pipe
        let errors: Pipe

        init(_ arguments: [String]) throws {
            process = ChildProcess()
            process.executableURL = try BuiltProduct.require("tether")
            process.arguments = arguments
            (output, errors) = (Pipe(), Pipe())
            process.standardOutput = output
            process.standardError = errors
            try process.run()
        }

        /// Reads `pipe` until it has printed `count` lines (or ended); returns them.
        static func lines(_ count: Int, from pipe: Pipe) async throws -> [String] {
            try await offPool { () -> [String] in
                var text = Data()
                while text.filter({ $0 == 0x0A }).count < count {
                    let chunk = pipe.fileHandleForReading.nextChunk()
                    if chunk.isEmpty { break }
                    text.append(chunk)
                }
                return String(decoding: text, as: UTF8.self).split(separator: "\n").map(String.init)
            }
        }
    }

    static func notes(_ arguments: [String]) async throws -> CommandRun {
        try await CommandRun.run(try BuiltProduct.require("tether"), ["notes"] + arguments)
    }

    @Test("the remote commands print what the local ones print, and watch prints each change as it is pushed")
    func remoteCommandsAndWatch() async throws {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("TetherNotesCommand-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try Running(["serve", "--notes", "--port", "0", "--dir", folder.path])
        defer { server.process.terminate() }
        let first = try await Running.lines(1, from: server.output).first ?? ""
        let prefix = "listening on 127.0.0.1:"
        #expect(first.hasPrefix(prefix))
        let remote = "127.0.0.1:\(try #require(Int(first.dropFirst(prefix.count))))"

        let watch = try Running(["notes", "watch", "--remote", remote, "--verbose"])
        defer { watch.process.terminate() }
        #expect(
            try await Running.lines(2, from: watch.errors) == ["debug: notes server \(remote)", "debug: subscribed"]
        )

        let added = try await Self.notes(["add", "--remote", remote, "Buy milk"])
        #expect(added.status == 0, "\(added.errors)")
        let id = added.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(UUID(uuidString: id) != nil)
        #expect(try await Self.notes(["edit", "--remote", remote, id, "Buy oat milk"]).status == 0)

        // The server's folder, listed locally and through the server: the same lines (the seed's two notes too).
        let remoteList = try await Self.notes(["list", "--json", "--remote", remote])
        let localList = try await Self.notes(["list", "--json", "--dir", folder.path])
        #expect(remoteList.status == 0 && localList.status == 0)
        #expect(remoteList.output == localList.output)
        #expect(remoteList.output.contains("Buy oat milk") && remoteList.output.contains("Welcome to MyNotes."))

        #expect(try await Self.notes(["rm", "--remote", remote, id]).status == 0)
        let again = try await Self.notes(["rm", "--remote", remote, id])
        #expect(again.status == 1)
        #expect(again.errors == "error: no note \(id)\n")

        #expect(
            try await Running.lines(3, from: watch.output) == [
                "added \(id) Buy milk", "edited \(id) Buy oat milk", "removed \(id)",
            ]
        )
    }

    @Test("over TLS: a client trusting the server's certificate is served; a plaintext client fails, not hangs")
    func overTLS() async throws {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("TetherNotesTLS-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (cert, key) = (
            folder.appendingPathComponent("cert.pem").path, folder.appendingPathComponent("key.pem").path
        )
        let made = try await CommandRun.run(
            URL(fileURLWithPath: "/usr/bin/openssl"),
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert,
            ]
        )
        try #require(made.status == 0, "\(made.errors)")
        let server = try Running([
            "serve", "--notes", "--port", "0", "--dir", folder.path, "--tls", "--cert", cert, "--key", key,
        ])
        defer { server.process.terminate() }
        let first = try await Running.lines(1, from: server.output).first ?? ""
        #expect(first.hasSuffix(" (TLS)"))
        let port = try #require(Int(first.dropFirst("listening on 127.0.0.1:".count).dropLast(" (TLS)".count)))
        let remote = "127.0.0.1:\(port)"

        let added = try await Self.notes(["add", "--remote", remote, "--tls", "--ca", cert, "secret"])
        #expect(added.status == 0, "\(added.errors)")
        let listed = try await Self.notes(["list", "--remote", remote, "--tls", "--ca", cert])
        #expect(listed.output.contains("secret"))
        let plain = try await Self.notes(["list", "--remote", remote])
        #expect(plain.status == 1)
        #expect(plain.errors.hasPrefix("error: "))
    }

    @Test("list prints a note's control characters escaped: no terminal escape, no fake line")
    func listEscapesControlCharacters() async throws {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("TetherNotesEscapes-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let hostile = "evil\u{1B}[2J\nab12cd34  2001-01-01T00:00:00.000Z  a fake note\u{7}"
        let added = try await Self.notes(["add", "--dir", folder.path, hostile])
        #expect(added.status == 0, "\(added.errors)")
        let id = added.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let listed = try await Self.notes(["list", "--dir", folder.path])
        #expect(listed.status == 0)
        #expect(!listed.output.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
        let line = try #require(listed.output.split(separator: "\n").first { $0.hasPrefix(id) })
        #expect(line.hasSuffix("  evil\\u{1B}[2J\\nab12cd34  2001-01-01T00:00:00.000Z  a fake note\\u{7}"))
    }

    @Test("--remote checks its argument, and a server that is not there is an error, not a hang")
    func badRemote() async throws {
        let malformed = try await Self.notes(["list", "--remote", "no-port"])
        #expect(malformed.status != 0)
        #expect(malformed.errors.contains("--remote wants HOST:PORT"))
        let watchLocal = try await Self.notes(["watch"])
        #expect(watchLocal.status != 0 && watchLocal.errors.contains("watch needs --remote"))
        // A port nobody listens on (the listener is closed before the command runs).
        let nobody = try await Self.notes(["list", "--remote", "127.0.0.1:9"])
        #expect(nobody.status == 1)
        #expect(nobody.errors.hasPrefix("error: 127.0.0.1:9:"))
    }
}
