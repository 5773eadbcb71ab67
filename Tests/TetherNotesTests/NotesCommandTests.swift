import Foundation
import Testing
import TetherTestSupport

/// `tether serve --notes`, `tether notes user …` and `tether notes … --remote --user`, run as a user would, on
/// loopback.
@Suite("tether serve --notes, and tether notes --remote and watch against it", .timeLimit(.minutes(2)))
struct NotesCommandTests {
    /// A child `tether` whose output the test reads line by line.
    final class Running: Sendable {
        let process: ChildProcess
        let output: Pipe
        let errors: Pipe

        init(_ arguments: [String], environment: [String: String]? = nil) throws {
            process = ChildProcess()
            process.executableURL = try BuiltProduct.require("tether")
            process.arguments = arguments
            process.environment = environment
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

    static func notes(
        _ arguments: [String],
        environment: [String: String]? = nil,
        input: String? = nil
    ) async throws -> CommandRun {
        try await CommandRun.run(
            try BuiltProduct.require("tether"),
            ["notes"] + arguments,
            environment: environment,
            input: input
        )
    }

    /// The parent's environment with alice's password in `TETHER_NOTES_PASSWORD`.
    static let alice = ProcessInfo.processInfo.environment.merging(["TETHER_NOTES_PASSWORD": "alice pw"]) { $1 }

    /// A fresh folder with user alice (password "alice pw", 1 000 PBKDF2 iterations: logins in milliseconds) in its
    /// accounts.
    static func folderWithAlice() async throws -> URL {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("TetherNotesCommand-\(UUID().uuidString)", isDirectory: true)
        let added = try await notes(
            ["user", "add", "alice", "--dir", folder.path, "--pbkdf2-iterations", "1000"],
            input: "alice pw\n"
        )
        try #require(added.status == 0, "\(added.errors)")
        return folder
    }

    /// Starts `tether serve --notes` with `arguments`; returns it and its `HOST:PORT` once it listens.
    static func serve(_ arguments: [String]) async throws -> (Running, String) {
        let server = try Running(["serve", "--notes", "--port", "0"] + arguments)
        let first = try await Running.lines(1, from: server.output).first ?? ""
        let prefix = "listening on 127.0.0.1:"
        #expect(first.hasPrefix(prefix), "\(first)")
        let port = try #require(Int(first.dropFirst(prefix.count).prefix { $0.isNumber }))
        return (server, "127.0.0.1:\(port)")
    }

    @Test("logged in, the remote commands work and watch prints each change as it is pushed")
    func remoteCommandsAndWatch() async throws {
        let folder = try await Self.folderWithAlice()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, remote) = try await Self.serve(["--dir", folder.path])
        defer { server.process.terminate() }
        let login = ["--remote", remote, "--user", "alice"]

        let watch = try Running(["notes", "watch", "--verbose"] + login, environment: Self.alice)
        defer { watch.process.terminate() }
        #expect(
            try await Running.lines(2, from: watch.errors) == ["debug: notes server \(remote)", "debug: subscribed"]
        )

        let added = try await Self.notes(["add"] + login + ["Buy milk"], environment: Self.alice)
        #expect(added.status == 0, "\(added.errors)")
        let id = added.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(UUID(uuidString: id) != nil)
        #expect(try await Self.notes(["edit"] + login + [id, "Buy oat milk"], environment: Self.alice).status == 0)

        let remoteList = try await Self.notes(["list", "--json"] + login, environment: Self.alice)
        #expect(remoteList.status == 0)
        #expect(remoteList.output.contains("Buy oat milk") && remoteList.output.contains(id))
        // A user's notes start empty: the seed app's two notes are the single-user store's, not the accounts'.
        #expect(!remoteList.output.contains("Welcome to MyNotes."))

        #expect(try await Self.notes(["rm"] + login + [id], environment: Self.alice).status == 0)
        let again = try await Self.notes(["rm"] + login + [id], environment: Self.alice)
        #expect(again.status == 1)
        #expect(again.errors == "error: no note \(id)\n")

        #expect(
            try await Running.lines(3, from: watch.output) == [
                "added \(id) Buy milk", "edited \(id) Buy oat milk", "removed \(id)",
            ]
        )
    }

    @Test("a refused login exits 77 with exactly 'error: authentication failed', whatever the reason")
    func refusedLoginsExit77() async throws {
        let folder = try await Self.folderWithAlice()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, remote) = try await Self.serve(["--dir", folder.path])
        defer { server.process.terminate() }
        let environment = ProcessInfo.processInfo.environment
        for (user, secret) in [
            ("alice", ["TETHER_NOTES_PASSWORD": "wrong"]), ("mallory", ["TETHER_NOTES_PASSWORD": "alice pw"]),
            ("alice", ["TETHER_NOTES_TOKEN": "made-up"]),
        ] {
            let run = try await Self.notes(
                ["list", "--remote", remote, "--user", user],
                environment: environment.merging(secret) { $1 }
            )
            #expect(run.status == 77 && run.errors == "error: authentication failed\n", "\(user) \(secret.keys)")
            #expect(run.output.isEmpty)
        }
        // Without --user, the server answers nothing but that a login must come first.
        let anonymous = try await Self.notes(["list", "--remote", remote])
        #expect(anonymous.status == 1 && anonymous.errors.contains("authenticate"))
        let noSecret = try await Self.notes(
            ["list", "--remote", remote, "--user", "alice"],
            environment: environment.filter { !$0.key.hasPrefix("TETHER_NOTES_") }
        )
        #expect(noSecret.status == 1 && noSecret.errors.contains("TETHER_NOTES_PASSWORD"))
    }

    @Test("tokens: printed once by user add --token, read from a private credentials file, revoked by revoke-tokens")
    func tokensAndCredentialsFiles() async throws {
        let folder = try await Self.folderWithAlice()
        defer { try? FileManager.default.removeItem(at: folder) }
        let issued = try await Self.notes(["user", "add", "alice", "--token", "--dir", folder.path])
        #expect(issued.status == 0, "\(issued.errors)")
        let token = issued.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.count == 43)
        let users = try await Self.notes(["user", "list", "--dir", folder.path])
        #expect(users.output.hasPrefix("alice  ") && users.output.hasSuffix("  password\n"))
        let (server, remote) = try await Self.serve(["--dir", folder.path])
        defer { server.process.terminate() }
        let file = folder.appendingPathComponent("alice.credentials")
        _ = FileManager.default.createFile(atPath: file.path, contents: Data("token: \(token)\n".utf8))
        let login = ["list", "--remote", remote, "--user", "alice", "--credentials", file.path]
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        let open = try await Self.notes(login)
        #expect(open.status == 1 && open.errors.contains("chmod 600"))
        // A file that is not there, and an empty one: each refused with a message naming it, before any connection.
        let missing = folder.appendingPathComponent("none.credentials").path
        let absent = try await Self.notes(["list", "--remote", remote, "--user", "alice", "--credentials", missing])
        #expect(absent.status == 1 && absent.errors.contains("\(missing): cannot be read"), "\(absent.errors)")
        let empty = folder.appendingPathComponent("empty.credentials")
        _ = FileManager.default.createFile(atPath: empty.path, contents: Data(), attributes: [.posixPermissions: 0o600])
        let blank = try await Self.notes(["list", "--remote", remote, "--user", "alice", "--credentials", empty.path])
        #expect(blank.status == 1 && blank.errors.contains("is empty"), "\(blank.errors)")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        let listed = try await Self.notes(login)
        #expect(listed.status == 0, "\(listed.errors)")
        let revoked = try await Self.notes(["user", "revoke-tokens", "alice", "--dir", folder.path])
        #expect(revoked.output == "1\n")
        let refused = try await Self.notes(login)
        #expect(refused.status == 77 && refused.errors == "error: authentication failed\n")
        #expect(try await Self.notes(["user", "rm", "alice", "--dir", folder.path]).status == 0)
        #expect(try await Self.notes(["user", "list", "--dir", folder.path]).output.isEmpty)
    }

    @Test(
        "off loopback, serve --notes exits 64 without --tls and names --insecure-no-tls; --anonymous stays on loopback"
    )
    func secureDefaults() async throws {
        let tether = try BuiltProduct.require("tether")
        let plain = try await CommandRun.run(tether, ["serve", "--notes", "--host", "0.0.0.0", "--port", "0"])
        #expect(plain.status == 64)
        #expect(plain.errors.contains("--insecure-no-tls") && plain.errors.contains("--tls"))
        let anonymous = try await CommandRun.run(
            tether,
            ["serve", "--notes", "--anonymous", "--insecure-no-tls", "--host", "0.0.0.0", "--port", "0"]
        )
        #expect(anonymous.status == 64 && anonymous.errors.contains("--anonymous serves loopback only"))
    }

    @Test("user import moves a single-user store's notes to a user, once; the server then serves them to that user")
    func importingASingleUserStore() async throws {
        let folder = try await Self.folderWithAlice()
        defer { try? FileManager.default.removeItem(at: folder) }
        let old = try await Self.notes(["add", "--dir", folder.path, "from before accounts"])
        #expect(old.status == 0, "\(old.errors)")
        let id = old.output.trimmingCharacters(in: .whitespacesAndNewlines)
        // The single-user store holds the seed's two notes and this one.
        for _ in 0..<2 {
            let imported = try await Self.notes(["user", "import", "alice", "--dir", folder.path])
            #expect(imported.status == 0 && imported.output == "3\n", "\(imported.errors)")
        }
        let (server, remote) = try await Self.serve(["--dir", folder.path])
        defer { server.process.terminate() }
        let listed = try await Self.notes(["list", "--remote", remote, "--user", "alice"], environment: Self.alice)
        #expect(listed.output.split(separator: "\n").count == 3)
        #expect(listed.output.contains("\(id)  ") && listed.output.contains("from before accounts"))
        let nobody = try await Self.notes(["user", "import", "carol", "--dir", folder.path])
        #expect(nobody.status == 1 && nobody.errors.contains("no user carol"))
    }

    @Test("over TLS: a logged-in client trusting the server's certificate is served; a plaintext one fails, not hangs")
    func overTLS() async throws {
        let folder = try await Self.folderWithAlice()
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
        let login = ["--remote", "127.0.0.1:\(port)", "--user", "alice"]

        let added = try await Self.notes(["add"] + login + ["--tls", "--ca", cert, "secret"], environment: Self.alice)
        #expect(added.status == 0, "\(added.errors)")
        let listed = try await Self.notes(["list"] + login + ["--tls", "--ca", cert], environment: Self.alice)
        #expect(listed.output.contains("secret"))
        let plain = try await Self.notes(["list"] + login, environment: Self.alice)
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
