import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a redirect changes the request (RFC 9110 §15.4, and what browsers and NSURLConnection do).
enum RedirectRules {
    /// The request proposed for a redirect to `target`: 303 (except HEAD) and POST on 301/302 become GET
    /// without a body; a cross-origin hop drops `Authorization`, `Proxy-Authorization` and `Cookie`.
    static func request(following request: URLRequest, to target: URL, status: Int) -> URLRequest {
        var next = request
        next.url = target
        let method = (request.httpMethod ?? "GET").uppercased()
        if (status == 303 && method != "HEAD") || ((status == 301 || status == 302) && method == "POST") {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.httpBodyStream = nil
            for name in ["Content-Type", "Content-Length", "Transfer-Encoding", "Content-Encoding"] {
                next.setValue(nil, forHTTPHeaderField: name)
            }
        }
        if self.origin(of: target) != self.origin(of: request.url) {
            for name in ["Authorization", "Proxy-Authorization", "Cookie"] {
                next.setValue(nil, forHTTPHeaderField: name)
            }
        }
        return next
    }

    /// `scheme://host:port` with the default port filled in.
    static func origin(of url: URL?) -> String? {
        guard let url, let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }
}

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
    private(set) var headerName = "Authorization"
    private var activeSpaceKey: String?

    /// Records a challenge for `spaceKey` and returns its previous failure count.
    mutating func recordChallenge(spaceKey: String, challenge: HTTPAuthChallenge) -> Int {
        if self.activeSpaceKey == spaceKey, self.active != nil {
            // The credential we sent for this space was rejected (a stale Digest nonce is not a failure).
            if challenge.parameters["stale"]?.lowercased() != "true" {
                self.failures[spaceKey, default: 0] += 1
            }
            self.active = nil
        }
        self.activeSpaceKey = spaceKey
        return self.failures[spaceKey, default: 0]
    }

    mutating func activate(challenge: HTTPAuthChallenge, isProxy: Bool, origin: String?, user: String, password: String)
    {
        self.active = Active(challenge: challenge, origin: origin, user: user, password: password)
        self.headerName = isProxy ? "Proxy-Authorization" : "Authorization"
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
