import AsyncHTTPClient
import Foundation
import NIOCore
import TetherConcurrency

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPLoad {
    /// Puts the challenge to the delegate and returns its answer.
    /// - Throws: the reason the load was cancelled meanwhile.
    func askDelegate(
        _ question: HTTPLoadMachine.Challenge,
        context: LoadContext
    ) async throws
        -> URLConnection.ChallengeDisposition
    {
        let sender = ChallengeSender()
        let challenge = URLAuthenticationChallenge(
            protectionSpace: Self.protectionSpace(of: question),
            proposedCredential: nil,
            previousFailureCount: question.previousFailureCount,
            failureResponse: question.failureResponse,
            error: nil,
            sender: sender
        )
        self.state.withLock { $0.sender = sender }
        if self.cancelCode != nil { sender.answer(.cancel) }
        let disposition = await context.paused {
            await sender.waitForAnswer { self.observer.loadDidReceive(challenge) }
        }
        self.state.withLock { $0.sender = nil }
        if let code = self.cancelCode { throw URLError.tether(code, url: question.url) }
        return disposition
    }

    /// The protection space of a challenge, as NSURLConnection describes it.
    static func protectionSpace(of question: HTTPLoadMachine.Challenge) -> URLProtectionSpace {
        let url = question.url
        let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        let scheme = url.scheme?.lowercased() ?? "http"
        return URLProtectionSpace(
            host: url.host ?? "",
            port: port,
            protocol: scheme,
            realm: question.challenge.realm,
            authenticationMethod: question.challenge.authenticationMethod
        )
    }

    /// The shared storage's credential for `space`. Matches spaces field by field: on Linux
    /// `URLProtectionSpace` equality is identity, so a lookup with an equal but new space finds nothing.
    static func storedCredential(for space: URLProtectionSpace) -> URLCredential? {
        let storage = URLCredentialStorage.shared
        if let credential = storage.defaultCredential(for: space) ?? storage.credentials(for: space)?.values.first {
            return credential
        }
        for (candidate, credentials) in storage.allCredentials
        where candidate.host.caseInsensitiveCompare(space.host) == .orderedSame && candidate.port == space.port
            && candidate.protocol?.lowercased() == space.protocol?.lowercased() && candidate.realm == space.realm
            && candidate.authenticationMethod == space.authenticationMethod && candidate.isProxy() == space.isProxy()
        {
            if let credential = storage.defaultCredential(for: candidate) ?? credentials.values.first {
                return credential
            }
        }
        return nil
    }
}
