import Foundation
import Logging
import NIOHTTP1
import Testing
import TetherConcurrency
import TetherTestSupport

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which server gets a credential, how long a load keeps answering challenges, and where a URL's password shows.
@Suite(.timeLimit(.minutes(1)))
struct CredentialExposureTests {
    @Test func a407FromTheOriginIsAnErrorAndGetsNoProxyCredential() async throws {
        let respond: @Sendable (ScriptedOrigin.Request) -> ScriptedOrigin.Response = { request in
            if request.headers.contains(name: "Proxy-Authorization") {
                return ScriptedOrigin.Response(200, [], "got it")
            }
            return ScriptedOrigin.Response(407, [("Proxy-Authenticate", "Basic realm=\"proxy\"")], "proxy denied")
        }
        try await withScriptedOrigin(respond) { origin in
            let delegate = RecordingDelegate()
            delegate.onChallenge = { connection, challenge in
                connection.answer(
                    challenge,
                    with: .useCredential(URLCredential(user: "pu", password: "pp", persistence: .none))
                )
            }
            try await load(request(origin.url("/proxyauth")), delegate: delegate)
            #expect(!delegate.events.contains { if case .challenge = $0 { true } else { false } })
            #expect(delegate.events.last == .failed(.badServerResponse))
            #expect(origin.requests.allSatisfy { !$0.headers.contains(name: "Proxy-Authorization") })
        }
    }

    /// A Digest server that calls every answer stale, with a fresh nonce each time.
    static let alwaysStale: @Sendable (ScriptedOrigin.Request) -> ScriptedOrigin.Response = { request in
        let stale = request.headers.contains(name: "Authorization") ? ", stale=true" : ""
        let challenge = "Digest realm=\"r\", qop=\"auth\", nonce=\"\(UUID().uuidString)\"\(stale)"
        return ScriptedOrigin.Response(401, [("WWW-Authenticate", challenge)], "denied")
    }

    @Test func aServerThatCallsEveryAnswerStaleMakesItAFailure() async throws {
        try await withScriptedOrigin(Self.alwaysStale) { origin in
            let delegate = RecordingDelegate()
            delegate.onChallenge = { connection, challenge in
                let credential = URLCredential(user: "u", password: "p", persistence: .none)
                connection.answer(
                    challenge,
                    with: challenge.previousFailureCount == 0 ? .useCredential(credential) : .continueWithoutCredential
                )
            }
            try await load(request(origin.url("/stale")), delegate: delegate)
            #expect(delegate.events.last == .finished)
            #expect(delegate.lastResponse?.statusCode == 401)
            let failures = delegate.events.compactMap { event -> Int? in
                if case .challenge(_, _, let failures) = event { return failures }
                return nil
            }
            #expect(failures == [0, 0, 1])
            #expect(origin.requests.count == 3)
        }
    }

    @Test func aLoadAnswersABoundedNumberOfChallenges() async throws {
        try await withScriptedOrigin(Self.alwaysStale) { origin in
            let delegate = RecordingDelegate()
            delegate.onChallenge = { connection, challenge in
                connection.answer(
                    challenge,
                    with: .useCredential(URLCredential(user: "u", password: "p", persistence: .none))
                )
            }
            try await load(request(origin.url("/forever")), delegate: delegate)
            #expect(delegate.events.last == .finished)
            #expect(delegate.lastResponse?.statusCode == 401)
            #expect(origin.requests.count == HTTPLoadMachine.maximumAuthenticationRounds + 1)
        }
    }

    @Test func aURLsPasswordStaysOutOfTheError() async throws {
        let url = URL(string: "http://ann:s3cret@127.0.0.1:\(try closedPort())/x")!
        do {
            _ = try await URLConnection.data(for: request(url), configuration: .uncached)
            Issue.record("expected the load to fail")
        } catch let error as URLError {
            #expect(error.code == .cannotConnectToHost)
            #expect(error.failingURL?.absoluteString == "http://ann@127.0.0.1:\(url.port!)/x")
            #expect(!"\(error.userInfo)".contains("s3cret"))
            #expect(!error.localizedDescription.contains("s3cret"))
        }
    }

    @Test func aURLsPasswordStaysOutOfTheLog() async throws {
        let records = LockedBox<[String]>([])
        var configuration = URLConnection.Configuration.uncached
        configuration.logger = Logger(label: "test") { _ in CapturingLogHandler(records: records) }
        let url = URL(string: "http://ann:s3cret@127.0.0.1:\(try closedPort())/x")!
        await #expect(throws: URLError.self) {
            _ = try await URLConnection.data(for: request(url), configuration: configuration)
        }
        let logged = records.withLock { $0 }
        #expect(logged.contains { $0.contains("load failed") && $0.contains("ann@127.0.0.1") }, "\(logged)")
        #expect(!logged.contains { $0.contains("s3cret") }, "\(logged)")
    }

    @Test func getPrintsNoPasswordOfTheURL() async throws {
        let tether = try BuiltProduct.require("tether")
        let run = try await CommandRun.run(
            tether,
            ["get", "--no-cache", "http://ann:s3cret@127.0.0.1:\(try closedPort())/x"]
        )
        #expect(run.status != 0)
        #expect(run.errors.contains("ann@127.0.0.1"), "\(run.errors)")
        #expect(!run.errors.contains("s3cret") && !run.output.contains("s3cret"), "\(run.errors)")
    }

    @Test(
        arguments: [
            ("http://ann:s3cret@h/x", "http://ann@h/x"),
            ("http://ann@h/x", "http://ann@h/x"),
            ("http://h/x?a=b:c@d", "http://h/x?a=b:c@d"),
            ("socks5://u:p@proxy:1080", "socks5://u@proxy:1080"),
            ("u:p@proxy:3128", "u@proxy:3128"),
            ("http://h/x", "http://h/x"),
        ]
    )
    func aPasswordIsRedacted(url: String, expected: String) {
        #expect(Redaction.url(url) == expected)
    }

    @Test func anEnvironmentProxyThatCannotBeUsedFailsTheLoad() async throws {
        let direct: @Sendable (ScriptedOrigin.Request) -> ScriptedOrigin.Response = { _ in
            ScriptedOrigin.Response(200, [], "direct")
        }
        try await withScriptedOrigin(direct) { origin in
            let tether = try BuiltProduct.require("tether")
            var environment = ProcessInfo.processInfo.environment
            for name in ["http_proxy", "https_proxy", "HTTPS_PROXY", "ALL_PROXY", "no_proxy", "NO_PROXY"] {
                environment[name] = nil
            }
            for proxy in ["socks4://127.0.0.1:1080", "http://127.0.0.1:70000"] {
                environment["all_proxy"] = proxy
                let run = try await CommandRun.run(
                    tether,
                    ["get", "--no-cache", "--proxy-from-environment", origin.url("/direct").absoluteString],
                    environment: environment
                )
                #expect(run.status != 0)
                #expect(run.errors.contains("all_proxy"), "\(run.errors)")
            }
            #expect(origin.requests.isEmpty)
        }
    }

    @Test func theEnvironmentsUnusableProxyIsAnError() {
        let url = URL(string: "http://a.test/")!
        for proxy in ["socks4://p:1", "ftp://p:1", "http://p:0", "http://ann:s3cret@p:70000"] {
            do {
                _ = try ProxyRules.proxy(
                    for: url,
                    explicit: nil,
                    usesEnvironment: true,
                    environment: ["all_proxy": proxy]
                )
                Issue.record("expected \(proxy) to be refused")
            } catch let error as URLError {
                #expect(error.code == .badURL)
                #expect(error.localizedDescription.contains("all_proxy"))
                #expect(!"\(error.userInfo)".contains("s3cret"))
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    }
}
