import AsyncHTTPClient
import Foundation
import NIOCore
import TetherConcurrency

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPLoad {
    /// Returns true to send the request again with credentials, false to deliver the 401/407 as the response.
    func answer(
        _ challenge: HTTPAuthChallenge,
        isProxy: Bool,
        url: URL,
        failureResponse: HTTPURLResponse,
        auth: inout AuthenticationState,
        context: LoadContext
    ) async throws -> Bool {
        let space: URLProtectionSpace
        let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        let scheme = url.scheme?.lowercased() ?? "http"
        if isProxy {
            space = URLProtectionSpace(
                proxyHost: url.host ?? "",
                port: port,
                type: scheme == "https" ? NSURLProtectionSpaceHTTPSProxy : NSURLProtectionSpaceHTTPProxy,
                realm: challenge.realm,
                authenticationMethod: challenge.authenticationMethod
            )
        } else {
            space = URLProtectionSpace(
                host: url.host ?? "",
                port: port,
                protocol: scheme,
                realm: challenge.realm,
                authenticationMethod: challenge.authenticationMethod
            )
        }
        let spaceKey = "\(isProxy)|\(url.host ?? "")|\(port)|\(challenge.realm ?? "")|\(challenge.authenticationMethod)"
        let failures = auth.recordChallenge(spaceKey: spaceKey, challenge: challenge)
        let sender = ChallengeSender()
        let urlChallenge = URLAuthenticationChallenge(
            protectionSpace: space,
            proposedCredential: nil,
            previousFailureCount: failures,
            failureResponse: failureResponse,
            error: nil,
            sender: sender
        )
        self.state.withLock { $0.sender = sender }
        if self.cancelCode != nil { sender.answer(.cancel) }
        let disposition = await context.paused {
            await sender.waitForAnswer { self.observer.loadDidReceive(urlChallenge) }
        }
        self.state.withLock { $0.sender = nil }
        if let code = self.cancelCode { throw URLError.tether(code, url: url) }

        var credential: URLCredential?
        switch disposition {
        case .useCredential(let given):
            credential = given
        case .continueWithoutCredential, .rejectProtectionSpace:
            return false
        case .cancel:
            throw URLError.tether(.userCancelledAuthentication, url: url)
        case .performDefaultHandling:
            if !auth.triedURLCredential.contains(spaceKey), let user = url.user {
                auth.triedURLCredential.insert(spaceKey)
                credential = URLCredential(user: user, password: url.password ?? "", persistence: .none)
            } else if !auth.triedStorage.contains(spaceKey) {
                auth.triedStorage.insert(spaceKey)
                let usesStorage = await context.paused { await self.observer.loadShouldUseCredentialStorage() }
                if usesStorage {
                    credential = Self.storedCredential(for: space)
                }
            }
        }
        guard let credential, let user = credential.user else { return false }
        auth.activate(
            challenge: challenge,
            isProxy: isProxy,
            origin: RedirectRules.origin(of: url),
            user: user,
            password: credential.password ?? ""
        )
        return true
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
