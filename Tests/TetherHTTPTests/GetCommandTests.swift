import Foundation
import Testing
import TetherTestSupport

/// `tether get --ca`, `--insecure`, `-X` and `-d`, run as a user would, against the test servers.
@Suite(.timeLimit(.minutes(1)))
struct GetCommandTests {
    /// The `/echo` answer: what the server received.
    struct Echo: Decodable {
        var method: String
        var headers: [String: String]
        var bodyLength: Int
        var sha256: String
    }

    static func echo(_ run: CommandRun) throws -> Echo {
        try JSONDecoder().decode(Echo.self, from: Data(run.output.utf8))
    }

    /// SHA-256 of the bodies sent below (`/echo` answers with the hash of what it received).
    static let sha256 = [
        "name=tether&kind=cli": "fc56aaf262fd74478ec49db7f0e95fbccb1936210b69d0792b0e164fac33a3d0",
        "{\"a\":1}": "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862",
    ]

    @Test func aPrivateAuthorityIsRefusedUntilCaNamesIt() async throws {
        let server = try await TestServer.https()
        let certificates = try await TestCertificates.shared()
        let tether = try BuiltProduct.require("tether")
        let url = server.url("/hello").absoluteString

        let untrusted = try await CommandRun.run(tether, ["get", "--no-cache", url])
        #expect(untrusted.status != 0)
        #expect(untrusted.output.isEmpty)
        #expect(untrusted.errors.contains("error: "), "\(untrusted.errors)")

        for option in ["--ca", "--cacert"] {
            let trusted = try await CommandRun.run(
                tether,
                ["get", "--no-cache", option, certificates.caCertificatePath, url]
            )
            #expect(trusted.status == 0, "\(option): \(trusted.errors)")
            #expect(trusted.output == "hello")
            #expect(!trusted.errors.contains("warning"))
        }
    }

    @Test func insecureSkipsVerificationAndSaysSo() async throws {
        let server = try await TestServer.https()
        let tether = try BuiltProduct.require("tether")
        for option in ["--insecure", "-k"] {
            let run = try await CommandRun.run(
                tether,
                ["get", "--no-cache", option, server.url("/hello").absoluteString]
            )
            #expect(run.status == 0, "\(option): \(run.errors)")
            #expect(run.output == "hello")
            #expect(run.errors.contains("warning: --insecure: the server's certificate is not verified"))
        }
    }

    @Test func dataIsPostedAsCurlPostsItJoinedWithAmpersands() async throws {
        let server = try await TestServer.http()
        let tether = try BuiltProduct.require("tether")
        let run = try await CommandRun.run(
            tether,
            ["get", "-d", "name=tether", "--data", "kind=cli", server.url("/echo").absoluteString]
        )
        #expect(run.status == 0, "\(run.errors)")
        let echo = try Self.echo(run)
        #expect(echo.method == "POST")
        #expect(echo.bodyLength == "name=tether&kind=cli".utf8.count)
        #expect(echo.sha256 == Self.sha256["name=tether&kind=cli"])
        #expect(echo.headers["Content-Type"] == "application/x-www-form-urlencoded")
    }

    @Test func dataFromAFileLosesItsLineBreaksAndAGivenContentTypeAndMethodWin() async throws {
        let server = try await TestServer.http()
        let tether = try BuiltProduct.require("tether")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tether-get-\(UUID().uuidString)")
        try "{\"a\":\r\n1}\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let run = try await CommandRun.run(
            tether,
            [
                "get", "-X", "PUT", "-d", "@\(file.path)", "--header", "Content-Type: application/json",
                server.url("/echo").absoluteString,
            ]
        )
        #expect(run.status == 0, "\(run.errors)")
        let echo = try Self.echo(run)
        #expect(echo.method == "PUT")
        #expect(echo.sha256 == Self.sha256["{\"a\":1}"])
        #expect(echo.headers["Content-Type"] == "application/json")
    }

    @Test func methodAloneChangesTheMethodAndSendsNoBody() async throws {
        let server = try await TestServer.http()
        let tether = try BuiltProduct.require("tether")
        let run = try await CommandRun.run(tether, ["get", "-X", "DELETE", server.url("/echo").absoluteString])
        #expect(run.status == 0, "\(run.errors)")
        let echo = try Self.echo(run)
        #expect(echo.method == "DELETE")
        #expect(echo.bodyLength == 0)
    }

    @Test(
        arguments: [
            (["-X", "GET POST"], "-X: not an HTTP method"),
            (["-X", ""], "-X: not an HTTP method"),
            (["--ca", "/nonexistent/ca.pem"], "--ca: no PEM certificate could be read"),
            (["-d", "@/nonexistent/body"], "-d: cannot read /nonexistent/body"),
        ]
    )
    func aBadOptionIsRefusedBeforeAnythingIsSent(options: [String], message: String) async throws {
        let tether = try BuiltProduct.require("tether")
        let run = try await CommandRun.run(tether, ["get"] + options + ["http://127.0.0.1:9/"])
        #expect(run.status != 0)
        #expect(run.output.isEmpty)
        #expect(run.errors.contains(message), "\(run.errors)")
    }
}
