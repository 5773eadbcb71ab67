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
        let method = HTTPLoad.method(of: request)
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
