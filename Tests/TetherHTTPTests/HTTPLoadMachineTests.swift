import Foundation
import Testing

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `HTTPLoadMachine`: every decision of a load (cache, redirects, challenges, revalidation, stale fallback) as event
/// → action, without a server.
@Suite("HTTPLoadMachine: a load's decisions, event by event, without I/O")
struct HTTPLoadMachineTests {
    typealias Action = HTTPLoadMachine.Action

    static let url = URL(string: "http://example.test/notes")!
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func request(_ url: URL = url, policy: URLRequest.CachePolicy = .useProtocolCachePolicy) -> URLRequest {
        URLRequest(url: url, cachePolicy: policy, timeoutInterval: 60)
    }

    /// A stored 200 received `age` seconds before `now`, with these headers.
    static func entry(_ headers: [String: String], age: TimeInterval = 0) -> CacheEntry {
        CacheEntry(
            url: url,
            statusCode: 200,
            headers: headers,
            body: Data("stored".utf8),
            requestDate: now.addingTimeInterval(-age),
            responseDate: now.addingTimeInterval(-age),
            varyValues: [:],
            storagePolicy: 0
        )
    }

    /// A description of an action that tests can compare.
    static func describe(_ action: Action) -> String {
        switch action {
        case .serve(let entry): "serve \(entry.statusCode) \(String(decoding: entry.body, as: UTF8.self))"
        case .serveAndRevalidate(let entry):
            "serve \(entry.statusCode) \(String(decoding: entry.body, as: UTF8.self)) and revalidate"
        case .send(let hop):
            "send \(hop.method) \(hop.url.absoluteString)"
                + (hop.authorization.map { " \($0.name): \($0.value)" } ?? "")
                + hop.conditionalHeaders.map { " \($0.name): \($0.value)" }.joined()
        case .askToFollow(let request, let response):
            "ask to follow \(response.statusCode) to \(request.httpMethod ?? "GET") \(request.url!.absoluteString)"
        case .askForCredential(let question):
            "ask for a credential: \(question.challenge.authenticationMethod)"
                + " after \(question.previousFailureCount) failures"
        case .askCredentialStorage: "ask whether to use the credential storage"
        case .serveRevalidated(let entry): "serve revalidated, ETag \(entry.header("ETag") ?? "-")"
        case .complete(let part): "complete the part \(part.header("Content-Range") ?? "-")"
        case .deliver(let request, let stored):
            "deliver the response to \(request.url!.absoluteString)" + (stored != nil ? " (revalidated)" : "")
        case .fail(let code): "fail \(code.rawValue)"
        }
    }

    static func started(
        _ request: URLRequest,
        stored: CacheEntry? = nil,
        maximumRedirects: Int = 5
    )
        -> (HTTPLoadMachine, String)
    {
        var machine = HTTPLoadMachine(maximumRedirects: maximumRedirects)
        let action = machine.start(request, stored: stored, now: now)
        return (machine, describe(action))
    }

    static func received(
        _ machine: inout HTTPLoadMachine,
        _ status: Int,
        _ headers: [String: String] = [:],
        challenges: [String] = []
    ) -> String {
        describe(
            machine.received(
                status: status,
                headers: headers,
                challenges: challenges,
                version: "HTTP/1.1",
                requestDate: now,
                now: now
            )
        )
    }

    // MARK: - Start: the cache policy and the stored entry

    @Test(
        arguments: [
            // policy, stored entry, first action
            (URLRequest.CachePolicy.returnCacheDataDontLoad, nil, "fail \(URLError.Code.resourceUnavailable.rawValue)"),
            (.returnCacheDataDontLoad, "stale", "serve 200 stored"),
            (.returnCacheDataElseLoad, nil, "send GET http://example.test/notes"),
            (.returnCacheDataElseLoad, "stale", "serve 200 stored"),
            (.useProtocolCachePolicy, "fresh", "serve 200 stored"),
            (.useProtocolCachePolicy, "stale", "send GET http://example.test/notes If-None-Match: \"v1\""),
            (.useProtocolCachePolicy, "stale without validators", "send GET http://example.test/notes"),
            (.useProtocolCachePolicy, "stale-while-revalidate", "serve 200 stored and revalidate"),
            (
                .useProtocolCachePolicy, "past stale-while-revalidate",
                "send GET http://example.test/notes If-None-Match: \"v1\""
            ),
            (.reloadRevalidatingCacheData, "fresh", "send GET http://example.test/notes If-None-Match: \"v1\""),
            (.reloadIgnoringLocalCacheData, "fresh", "send GET http://example.test/notes"),
        ] as [(URLRequest.CachePolicy, String?, String)]
    )
    func theCachePolicyDecidesTheFirstAction(policy: URLRequest.CachePolicy, stored: String?, expected: String) {
        let entry: CacheEntry? =
            switch stored {
            case "fresh": Self.entry(["ETag": "\"v1\"", "Cache-Control": "max-age=600"], age: 10)
            case "stale": Self.entry(["ETag": "\"v1\"", "Cache-Control": "max-age=60"], age: 120)
            case "stale without validators": Self.entry(["Cache-Control": "max-age=60"], age: 120)
            case "stale-while-revalidate":
                Self.entry(["ETag": "\"v1\"", "Cache-Control": "max-age=60, stale-while-revalidate=90"], age: 120)
            case "past stale-while-revalidate":
                Self.entry(["ETag": "\"v1\"", "Cache-Control": "max-age=60, stale-while-revalidate=30"], age: 120)
            default: nil
            }
        #expect(Self.started(Self.request(policy: policy), stored: entry).1 == expected)
    }

    @Test func aConditionTheRequestAlreadyHasIsNotAddedTwice() {
        var request = Self.request()
        request.setValue("\"mine\"", forHTTPHeaderField: "If-None-Match")
        let stale = Self.entry(
            ["ETag": "\"v1\"", "Last-Modified": "Sun, 01 Nov 2026 00:00:00 GMT", "Cache-Control": "max-age=60"],
            age: 120
        )
        #expect(
            Self.started(request, stored: stale).1
                == "send GET http://example.test/notes If-Modified-Since: Sun, 01 Nov 2026 00:00:00 GMT"
        )
    }

    // MARK: - Responses

    @Test func aResponseIsDeliveredAndA304ServesTheRefreshedEntry() {
        var (machine, _) = Self.started(Self.request())
        #expect(Self.received(&machine, 200) == "deliver the response to http://example.test/notes")

        let stale = Self.entry(["ETag": "\"v1\"", "Cache-Control": "max-age=60"], age: 120)
        var (revalidating, _) = Self.started(Self.request(), stored: stale)
        #expect(Self.received(&revalidating, 304, ["ETag": "\"v2\""]) == "serve revalidated, ETag \"v2\"")
        // A 200 to a revalidation replaces the entry: delivered as revalidated, so the old entry can go.
        var (replaced, _) = Self.started(Self.request(), stored: stale)
        #expect(Self.received(&replaced, 200) == "deliver the response to http://example.test/notes (revalidated)")
    }

    @Test func redirectsAreProposedCountedAndDecidedByTheDelegate() {
        var post = Self.request()
        post.httpMethod = "POST"
        post.httpBody = Data("x".utf8)
        var (machine, _) = Self.started(post, maximumRedirects: 1)
        #expect(
            Self.received(&machine, 302, ["Location": "/moved"])
                == "ask to follow 302 to GET http://example.test/moved"
        )
        #expect(
            Self.describe(machine.redirect(decided: Self.request(URL(string: "http://example.test/moved")!)))
                == "send GET http://example.test/moved"
        )
        #expect(
            Self.received(&machine, 307, ["Location": "/again"])
                == "fail \(URLError.Code.httpTooManyRedirects.rawValue)"
        )

        var (declined, _) = Self.started(Self.request())
        _ = Self.received(&declined, 301, ["Location": "http://other.test/"])
        #expect(Self.describe(declined.redirect(decided: nil)) == "deliver the response to http://example.test/notes")

        var (unsupported, _) = Self.started(Self.request())
        _ = Self.received(&unsupported, 302, ["Location": "/x"])
        #expect(
            Self.describe(unsupported.redirect(decided: Self.request(URL(string: "http:///no-host")!)))
                == "fail \(URLError.Code.unsupportedURL.rawValue)"
        )
    }

    @Test(
        arguments: [
            (302, [:], "no Location"),
            (302, ["Location": "ftp://example.test/file"], "a scheme that is not HTTP"),
            (300, ["Location": "/choices"], "not a redirect status Tether follows"),
        ] as [(Int, [String: String], String)]
    )
    func aRedirectThatCannotBeFollowedIsDelivered(status: Int, headers: [String: String], why: String) {
        var (machine, _) = Self.started(Self.request())
        #expect(
            Self.received(&machine, status, headers) == "deliver the response to http://example.test/notes",
            "\(why)"
        )
    }

    // MARK: - Challenges

    @Test func aCredentialIsSentOnTheRetryAndARejectionCountsAsAFailure() {
        var (machine, _) = Self.started(Self.request())
        let basic = ["Basic realm=\"notes\""]
        #expect(
            Self.received(&machine, 401, challenges: basic)
                == "ask for a credential: NSURLAuthenticationMethodHTTPBasic after 0 failures"
        )
        let ann = URLCredential(user: "ann", password: "secret", persistence: .none)
        #expect(
            Self.describe(machine.credential(.useCredential(ann)))
                == "send GET http://example.test/notes Authorization: Basic YW5uOnNlY3JldA=="
        )
        #expect(
            Self.received(&machine, 401, challenges: basic)
                == "ask for a credential: NSURLAuthenticationMethodHTTPBasic after 1 failures"
        )
        #expect(
            Self.describe(machine.credential(.continueWithoutCredential))
                == "deliver the response to http://example.test/notes"
        )
    }

    @Test func a407FromTheOriginFailsTheLoadWithoutAskingForAProxyCredential() {
        var (machine, _) = Self.started(Self.request())
        #expect(Self.received(&machine, 407, challenges: ["Basic realm=\"proxy\""]) == "fail -1011")
    }

    @Test func challengesStopBeingAskedAfterTheMaximumNumberOfRounds() {
        var (machine, _) = Self.started(Self.request())
        let credential = URLCredential(user: "p", password: "q", persistence: .none)
        for round in 0..<HTTPLoadMachine.maximumAuthenticationRounds {
            let asked = Self.received(&machine, 401, challenges: ["Basic realm=\"r\""])
            #expect(asked == "ask for a credential: NSURLAuthenticationMethodHTTPBasic after \(round) failures")
            _ = machine.credential(.useCredential(credential))
        }
        #expect(
            Self.received(&machine, 401, challenges: ["Basic realm=\"r\""])
                == "deliver the response to http://example.test/notes"
        )
    }

    @Test func aStaleNonceIsForgivenOnceInARow() {
        var (machine, _) = Self.started(Self.request())
        let credential = URLCredential(user: "p", password: "q", persistence: .none)
        var failures: [Int] = []
        for index in 0..<4 {
            let stale = index == 0 ? "" : ", stale=true"
            let asked = Self.received(&machine, 401, challenges: ["Digest realm=\"r\", nonce=\"n\(index)\"\(stale)"])
            failures.append(Int(asked.split(separator: " ").dropLast().last ?? "") ?? -1)
            _ = machine.credential(.useCredential(credential))
        }
        #expect(failures == [0, 0, 1, 1])
    }

    @Test func theProtectionSpaceKeyIncludesTheScheme() {
        // The same host and port over http and https are two protection spaces: a failure over one is not
        // counted against the other.
        var (machine, _) = Self.started(Self.request(URL(string: "http://example.test:8443/notes")!))
        let credential = URLCredential(user: "p", password: "q", persistence: .none)
        _ = Self.received(&machine, 401, challenges: ["Basic realm=\"r\""])
        _ = machine.credential(.useCredential(credential))
        #expect(
            Self.received(&machine, 401, challenges: ["Basic realm=\"r\""])
                == "ask for a credential: NSURLAuthenticationMethodHTTPBasic after 1 failures"
        )
        _ = machine.credential(.useCredential(credential))
        _ = Self.received(&machine, 302, ["Location": "https://example.test:8443/notes"])
        _ = machine.redirect(decided: Self.request(URL(string: "https://example.test:8443/notes")!))
        #expect(
            Self.received(&machine, 401, challenges: ["Basic realm=\"r\""])
                == "ask for a credential: NSURLAuthenticationMethodHTTPBasic after 0 failures"
        )
    }

    @Test func defaultHandlingTriesTheURLsCredentialThenTheStorageOnceEach() {
        var (machine, _) = Self.started(Self.request(URL(string: "http://bob:pw@example.test/notes")!))
        let digest = ["Digest realm=\"n\", nonce=\"abc\", qop=\"auth\""]
        _ = Self.received(&machine, 401, challenges: digest)
        let first = machine.credential(.performDefaultHandling)
        guard case .send(let hop) = first else {
            Issue.record("expected a send, got \(Self.describe(first))")
            return
        }
        #expect(hop.authorization?.name == "Authorization")
        #expect(hop.authorization?.value.hasPrefix("Digest username=\"bob\"") == true)
        _ = Self.received(&machine, 401, challenges: digest)
        #expect(
            Self.describe(machine.credential(.performDefaultHandling)) == "ask whether to use the credential storage"
        )
        #expect(
            Self.describe(machine.credentialFromStorage(nil))
                == "deliver the response to http://bob:pw@example.test/notes"
        )
    }

    @Test func aCancelledChallengeFailsAndAResponseWithoutAChallengeIsDelivered() {
        var (machine, _) = Self.started(Self.request())
        _ = Self.received(&machine, 401, challenges: ["Basic realm=\"x\""])
        #expect(
            Self.describe(machine.credential(.cancel)) == "fail \(URLError.Code.userCancelledAuthentication.rawValue)"
        )

        var (plain, _) = Self.started(Self.request())
        #expect(Self.received(&plain, 401) == "deliver the response to http://example.test/notes")
    }

    @Test func aCrossOriginRedirectDropsTheActiveCredential() {
        var (machine, _) = Self.started(Self.request())
        _ = Self.received(&machine, 401, challenges: ["Basic realm=\"x\""])
        _ = machine.credential(.useCredential(URLCredential(user: "a", password: "b", persistence: .none)))
        _ = Self.received(&machine, 302, ["Location": "/same-origin"])
        #expect(
            Self.describe(machine.redirect(decided: Self.request(URL(string: "http://example.test/same-origin")!)))
                == "send GET http://example.test/same-origin Authorization: Basic YTpi"
        )
        _ = Self.received(&machine, 302, ["Location": "http://other.test/"])
        #expect(
            Self.describe(machine.redirect(decided: Self.request(URL(string: "http://other.test/")!)))
                == "send GET http://other.test/"
        )
    }

    // MARK: - Network failures

    @Test(
        arguments: [
            ("max-age=60", URLError.Code.cannotConnectToHost, "serve 200 stored"),
            ("max-age=60", .networkConnectionLost, "serve 200 stored"),
            ("max-age=60", .timedOut, "fail \(URLError.Code.timedOut.rawValue)"),
            ("max-age=60, must-revalidate", .cannotConnectToHost, "fail \(URLError.Code.cannotConnectToHost.rawValue)"),
        ] as [(String, URLError.Code, String)]
    )
    func aFailedRevalidationServesTheStaleEntryWhenItMay(cacheControl: String, code: URLError.Code, expected: String) {
        let stale = Self.entry(["ETag": "\"v1\"", "Cache-Control": cacheControl], age: 120)
        var (machine, _) = Self.started(Self.request(), stored: stale)
        #expect(Self.describe(machine.failed(code)) == expected)
    }

    @Test func aStaleEntryWithoutValidatorsIsServedWhenTheReloadFails() {
        let stale = Self.entry(["Cache-Control": "max-age=60"], age: 120)
        var (machine, first) = Self.started(Self.request(), stored: stale)
        #expect(first == "send GET http://example.test/notes")
        #expect(Self.describe(machine.failed(.networkConnectionLost)) == "serve 200 stored")
        var (reloading, _) = Self.started(Self.request(policy: .reloadIgnoringLocalCacheData), stored: stale)
        #expect(
            Self.describe(reloading.failed(.networkConnectionLost))
                == "fail \(URLError.Code.networkConnectionLost.rawValue)"
        )
    }

    @Test func aFailureWithoutAStoredEntryFails() {
        var (machine, _) = Self.started(Self.request())
        #expect(
            Self.describe(machine.failed(.cannotConnectToHost)) == "fail \(URLError.Code.cannotConnectToHost.rawValue)"
        )
    }
}
