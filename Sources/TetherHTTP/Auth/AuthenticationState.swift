import Foundation

/// The credentials a load has used: per protection space failure counts and the active credential.
struct AuthenticationState {
    private struct Active {
        var challenge: HTTPAuthChallenge
        var origin: String?
        var user: String
        var password: String
        var nonceCount = 0
        var clientNonce = DigestAuthorization.makeClientNonce()
    }

    private var active: Active?
    private var sentFor: Set<String> = []
    private var failures: [String: Int] = [:]
    var triedURLCredential: Set<String> = []
    var triedStorage: Set<String> = []
    private var activeSpaceKey: String?
    /// The spaces whose last rejection was forgiven as a stale nonce.
    private var forgivenStale: Set<String> = []

    /// Records a challenge for `spaceKey` and returns its previous failure count.
    mutating func recordChallenge(spaceKey: String, challenge: HTTPAuthChallenge) -> Int {
        if self.activeSpaceKey == spaceKey, self.active != nil {
            // The credential we sent for this space was rejected. A stale Digest nonce is not a failure the first
            // time in a row: a server that calls every answer stale is rejecting the credential.
            if challenge.parameters["stale"]?.lowercased() == "true", !self.forgivenStale.contains(spaceKey) {
                self.forgivenStale.insert(spaceKey)
            } else {
                self.forgivenStale.remove(spaceKey)
                self.failures[spaceKey, default: 0] += 1
            }
            self.active = nil
        }
        self.activeSpaceKey = spaceKey
        return self.failures[spaceKey, default: 0]
    }

    mutating func activate(challenge: HTTPAuthChallenge, origin: String?, user: String, password: String) {
        self.active = Active(challenge: challenge, origin: origin, user: user, password: password)
    }

    mutating func forgetActiveCredential() {
        self.active = nil
        self.activeSpaceKey = nil
    }

    /// The header value for a request to `url`, if a credential is active for its origin.
    mutating func authorization(for url: URL, method: String) -> String? {
        guard var active = self.active, active.origin == RedirectRules.origin(of: url) else { return nil }
        switch active.challenge.scheme {
        case .basic:
            return DigestAuthorization.basic(user: active.user, password: active.password)
        case .digest:
            active.nonceCount += 1
            self.active = active
            var uri = url.path.isEmpty ? "/" : url.path
            if let components = URLComponents(url: url, resolvingAgainstBaseURL: true) {
                uri = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
                if let query = components.percentEncodedQuery { uri += "?" + query }
            }
            return DigestAuthorization.digest(
                challenge: active.challenge,
                user: active.user,
                password: active.password,
                method: method,
                uri: uri,
                nonceCount: active.nonceCount,
                clientNonce: active.clientNonce
            )
        }
    }
}
