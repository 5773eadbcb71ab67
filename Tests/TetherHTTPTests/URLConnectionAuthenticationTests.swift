import Foundation
import Testing
import TetherConcurrency

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct URLConnectionAuthenticationTests {
    let server: TestServer

    init() async throws {
        server = try await TestServer.http()
    }

    @Test func aBasicChallengeAnsweredLaterFromAnotherThreadRetriesWithTheCredential() async throws {
        let delegate = RecordingDelegate()
        let seen = Signal<Bool>()
        delegate.onChallenge = { connection, challenge in
            #expect(challenge.failureResponse.map { ($0 as? HTTPURLResponse)?.statusCode } == 401)
            #expect(challenge.protectionSpace.host == "127.0.0.1")
            let box = UncheckedSendableBox((connection, challenge))
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) {
                let (connection, challenge) = box.value
                let credential = URLCredential(user: "u", password: "p", persistence: .none)
                challenge.sender?.use(credential, for: challenge)
                // Later answers are ignored: the first one won.
                connection.answer(challenge, with: .cancel)
                seen.fulfil(true)
            }
        }
        try await load(request(self.server.url("/basic")), delegate: delegate)
        #expect(
            delegate.events.contains(
                .challenge(method: NSURLAuthenticationMethodHTTPBasic, realm: "tether", failures: 0)
            )
        )
        #expect(delegate.events.last == .finished)
        #expect(String(decoding: delegate.body, as: UTF8.self) == "authorized")
    }

    @Test func aRejectedCredentialComesBackWithAFailureCountAndCancelFails() async throws {
        let delegate = RecordingDelegate()
        delegate.onChallenge = { connection, challenge in
            if challenge.previousFailureCount == 0 {
                connection.answer(
                    challenge,
                    with: .useCredential(URLCredential(user: "u", password: "wrong", persistence: .none))
                )
            } else {
                connection.answer(challenge, with: .cancel)
            }
        }
        try await load(request(self.server.url("/basic")), delegate: delegate)
        let challenges = delegate.events.filter { if case .challenge = $0 { return true } else { return false } }
        #expect(
            challenges == [
                .challenge(method: NSURLAuthenticationMethodHTTPBasic, realm: "tether", failures: 0),
                .challenge(method: NSURLAuthenticationMethodHTTPBasic, realm: "tether", failures: 1),
            ]
        )
        #expect(delegate.events.last == .failed(.userCancelledAuthentication))
    }

    @Test(arguments: [URLConnection.ChallengeDisposition.continueWithoutCredential, .rejectProtectionSpace])
    func continuingWithoutACredentialDeliversThe401(disposition: URLConnection.ChallengeDisposition) async throws {
        let delegate = RecordingDelegate()
        delegate.onChallenge = { connection, challenge in connection.answer(challenge, with: disposition) }
        try await load(request(self.server.url("/basic")), delegate: delegate)
        #expect(delegate.events.suffix(3) == [.response(status: 401, expectedLength: 6), .data(6), .finished])
    }

    @Test(arguments: ["MD5", "SHA-256"])
    func digestChallengesAreAnswered(algorithm: String) async throws {
        let delegate = RecordingDelegate()
        delegate.onChallenge = { connection, challenge in
            connection.answer(
                challenge,
                with: .useCredential(URLCredential(user: "u", password: "p", persistence: .none))
            )
        }
        try await load(request(self.server.url("/digest?alg=\(algorithm)")), delegate: delegate)
        #expect(
            delegate.events.contains(
                .challenge(method: NSURLAuthenticationMethodHTTPDigest, realm: "tether-digest", failures: 0)
            )
        )
        #expect(String(decoding: delegate.body, as: UTF8.self) == "digest ok")
    }

    @Test func defaultHandlingUsesTheURLsCredentialOnce() async throws {
        let url = URL(string: "http://u:p@127.0.0.1:\(self.server.port)/basic")!
        let (data, response) = try await URLConnection.data(for: request(url), configuration: .uncached)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == "authorized")

        let wrong = URL(string: "http://u:nope@127.0.0.1:\(self.server.port)/basic")!
        let (_, denied) = try await URLConnection.data(for: request(wrong), configuration: .uncached)
        #expect((denied as? HTTPURLResponse)?.statusCode == 401)
    }

    @Test func defaultHandlingFallsBackToTheSharedCredentialStorageUnlessTheDelegateDeclines() async throws {
        let realm = "storage-\(UUID().uuidString.prefix(8))"
        let space = URLProtectionSpace(
            host: "127.0.0.1",
            port: self.server.port,
            protocol: "http",
            realm: realm,
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic
        )
        URLCredentialStorage.shared.setDefaultCredential(
            URLCredential(user: "u", password: "p", persistence: .forSession),
            for: space
        )
        let url = self.server.url("/basic?realm=\(realm)")
        let (data, _) = try await URLConnection.data(for: request(url), configuration: .uncached)
        #expect(String(decoding: data, as: UTF8.self) == "authorized")

        let delegate = RecordingDelegate()
        delegate.usesCredentialStorage = false
        try await load(request(url), delegate: delegate)
        #expect(delegate.lastResponse?.statusCode == 401)
    }

    @Test func withoutAnyCredentialThe401IsTheResponse() async throws {
        let (data, response) = try await URLConnection.data(
            for: request(self.server.url("/basic")),
            configuration: .uncached
        )
        #expect((response as? HTTPURLResponse)?.statusCode == 401)
        #expect(String(decoding: data, as: UTF8.self) == "denied")
    }

    @Test func digestHashesMatchKnownVectors() {
        #expect(Digests.hex(Digests.md5(Array("".utf8))) == "d41d8cd98f00b204e9800998ecf8427e")
        #expect(
            Digests.hex(Digests.md5(Array("The quick brown fox jumps over the lazy dog".utf8)))
                == "9e107d9d372bb6826bd81d3542a419d6"
        )
        #expect(
            Digests.hex(Digests.sha256(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        )
        #expect(
            Digests.hex(Digests.sha256(Array(repeating: 0x61, count: 1000)))
                == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"
        )
    }

    @Test(arguments: [
        ("MD5", "8ca523f5e9506fed4657c9700eebdbec"),
        ("SHA-256", "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"),
    ])
    func digestResponsesMatchTheRFC7616Examples(algorithm: String, expected: String) throws {
        let header =
            #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=\#(algorithm), "#
            + #"nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#
        let challenge = try #require(HTTPAuthChallenge.strongest(in: [header]))
        let value = DigestAuthorization.digest(
            challenge: challenge,
            user: "Mufasa",
            password: "Circle of Life",
            method: "GET",
            uri: "/dir/index.html",
            nonceCount: 1,
            clientNonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"
        )
        #expect(value.contains("response=\"\(expected)\""))
        #expect(value.contains("nc=00000001"))
        #expect(value.contains(#"opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#))
    }

    @Test func challengeHeadersWithSeveralSchemesPickDigest() {
        let header = #"Basic realm="b", Digest realm="d", nonce="n", qop="auth,auth-int", algorithm=SHA-256"#
        let challenge = HTTPAuthChallenge.strongest(in: [header])
        #expect(challenge?.scheme == .digest)
        #expect(challenge?.realm == "d")
        #expect(HTTPAuthChallenge.strongest(in: [#"Negotiate abc, Basic realm="only""#])?.realm == "only")
        #expect(HTTPAuthChallenge.strongest(in: ["Bearer"]) == nil)
    }
}
