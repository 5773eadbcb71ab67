import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// RFC 6265 rules for which stored cookies a request carries (§5.4) and which cookies a response may store (§5.3),
/// applied to what Foundation's `HTTPCookieStorage` keeps and returns (on Linux it matches hosts only: it would send
/// a `Secure` cookie over http, a `Path=/admin` cookie to `/`, an expired cookie, and store `Domain=.com` from
/// `evil.com`).
///
/// Foundation marks a cookie set with a `Domain` attribute by a leading dot on its `domain`; without one (host-only),
/// `domain` is the host that set it. An IPv4 `Domain` keeps no dot: it must equal the host.
struct CookieRules {
    /// The time against which expiry is checked.
    var now: Date

    init(now: Date = Date()) {
        self.now = now
    }

    // MARK: - Sending (§5.4)

    /// Whether a request to `url` carries `cookie`: its domain matches the host (exactly when host-only; the host or
    /// a subdomain of it otherwise, never an IP address, never a public suffix), its path matches the URL's path, it
    /// is not `Secure` unless the URL is https, and it has not expired.
    func shouldSend(_ cookie: HTTPCookie, to url: URL) -> Bool {
        guard let host = url.host?.lowercased(), !host.isEmpty else { return false }
        return self.shouldSend(
            cookie,
            host: host,
            path: Self.requestPath(of: url),
            isHTTPS: url.scheme?.lowercased() == "https"
        )
    }

    /// The cookies of `cookies` that a request to `url` carries, longest path first (§5.4 step 2).
    func cookies(_ cookies: [HTTPCookie], for url: URL) -> [HTTPCookie] {
        guard let host = url.host?.lowercased(), !host.isEmpty else { return [] }
        let path = Self.requestPath(of: url)
        let isHTTPS = url.scheme?.lowercased() == "https"
        let chosen = cookies.filter { self.shouldSend($0, host: host, path: path, isHTTPS: isHTTPS) }
        guard chosen.count > 1 else { return chosen }
        return chosen.enumerated().sorted { lhs, rhs in
            lhs.element.path.count != rhs.element.path.count
                ? lhs.element.path.count > rhs.element.path.count : lhs.offset < rhs.offset
        }.map(\.element)
    }

    private func shouldSend(_ cookie: HTTPCookie, host: String, path: String, isHTTPS: Bool) -> Bool {
        if cookie.isSecure && !isHTTPS { return false }
        if let expires = cookie.expiresDate, expires <= self.now { return false }
        guard Self.pathMatches(path, cookiePath: cookie.path) else { return false }
        let domain = cookie.domain.lowercased()
        if domain.hasPrefix(".") {
            let name = String(domain.dropFirst())
            return !Self.isPublicSuffix(name) && Self.domainMatches(host: host, domain: name)
        }
        return Self.normalizedHost(host) == Self.normalizedHost(domain)
    }

    // MARK: - Storing (§5.3)

    /// The cookie to store for `cookie`, which a response from `url` set in the `Set-Cookie` line `line`; nil to
    /// ignore it.
    ///
    /// Refused: a `Domain` that is a public suffix other than the host itself (which makes the cookie host-only), or
    /// that the host does not domain-match, or any `Domain` other than the host itself when the host is an IP
    /// address; a `Secure` cookie from a URL that is not https (RFC 6265bis §5.7); a `__Secure-` cookie without
    /// `Secure`, a `__Host-` cookie without `Secure`, with a `Domain` or with a path other than `/`. A cookie whose
    /// line gives no `Path` (or one not starting with `/`) gets the URL's default path (§5.1.4), not `/`.
    func cookieToStore(_ cookie: HTTPCookie, from url: URL, line: String) -> HTTPCookie? {
        guard let host = url.host?.lowercased(), !host.isEmpty else { return nil }
        let isHTTPS = url.scheme?.lowercased() == "https"
        if cookie.isSecure && !isHTTPS { return nil }
        var properties = cookie.properties ?? [:]
        var changed = false
        let domain = cookie.domain.lowercased()
        let hasDomainAttribute: Bool
        if domain.hasPrefix(".") {
            let name = String(domain.dropFirst())
            if Self.isIPAddress(host) { return nil }
            if Self.isPublicSuffix(name) {
                guard name == host else { return nil }
                properties[.domain] = host
                changed = true
                hasDomainAttribute = false
            } else {
                guard Self.domainMatches(host: host, domain: name) else { return nil }
                hasDomainAttribute = true
            }
        } else {
            guard Self.normalizedHost(domain) == Self.normalizedHost(host) else { return nil }
            hasDomainAttribute = Self.attribute("domain", in: line) != nil
        }
        var path = cookie.path
        if !(Self.attribute("path", in: line)?.hasPrefix("/") ?? false) {
            path = Self.defaultPath(of: url)
            if path != cookie.path {
                properties[.path] = path
                changed = true
            }
        }
        if cookie.name.hasPrefix("__Secure-") && !cookie.isSecure { return nil }
        if cookie.name.hasPrefix("__Host-") && (!cookie.isSecure || hasDomainAttribute || path != "/") { return nil }
        guard changed else { return cookie }
        return HTTPCookie(properties: properties)
    }

    // MARK: - Matching

    /// §5.1.3: `host` is `domain`, or a name (not an IP address) ending in `.` + `domain`.
    static func domainMatches(host: String, domain: String) -> Bool {
        let host = host.lowercased()
        let domain = domain.lowercased()
        if host == domain { return true }
        return !self.isIPAddress(host) && host.hasSuffix("." + domain)
    }

    /// §5.1.4: the cookie's path is the request's path, or a prefix of it that ends in `/` or is followed by `/`.
    static func pathMatches(_ requestPath: String, cookiePath: String) -> Bool {
        if requestPath == cookiePath { return true }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        if cookiePath.hasSuffix("/") { return true }
        return requestPath.dropFirst(cookiePath.count).first == "/"
    }

    /// §5.1.4: the directory of the URL's path (`/a/b` → `/a`, `/a` → `/`).
    static func defaultPath(of url: URL) -> String {
        let path = self.requestPath(of: url)
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// The URL's path as sent (percent-encoded), `/` when empty.
    static func requestPath(of url: URL) -> String {
        let path =
            URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedPath ?? url.path
        return path.isEmpty ? "/" : path
    }

    /// Whether `host` is an IPv4 or IPv6 address (with or without brackets).
    static func isIPAddress(_ host: String) -> Bool {
        let bare = self.normalizedHost(host)
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, bare, &v4) == 1 || inet_pton(AF_INET6, bare, &v6) == 1
    }

    /// Whether `domain` is a public suffix: any single label (`com`, `local`), or one of ``publicSuffixes``.
    static func isPublicSuffix(_ domain: String) -> Bool {
        let domain = domain.lowercased()
        return !domain.contains(".") || self.publicSuffixes.contains(domain)
    }

    /// The multi-label public suffixes Tether knows (a small built-in part of the Public Suffix List: common
    /// country second levels and shared hosting domains). Every single-label name counts as one too.
    static let publicSuffixes: Set<String> = [
        "co.uk", "org.uk", "ac.uk", "gov.uk", "ltd.uk", "plc.uk", "me.uk", "net.uk", "nhs.uk", "sch.uk",
        "com.au", "net.au", "org.au", "edu.au", "gov.au", "asn.au", "id.au",
        "co.jp", "ne.jp", "or.jp", "ac.jp", "go.jp", "gr.jp", "ed.jp", "lg.jp",
        "co.nz", "org.nz", "net.nz", "govt.nz", "ac.nz",
        "co.za", "org.za", "gov.za", "ac.za",
        "com.br", "net.br", "org.br", "gov.br", "edu.br",
        "com.cn", "net.cn", "org.cn", "gov.cn", "edu.cn",
        "com.mx", "org.mx", "gob.mx", "edu.mx",
        "co.in", "net.in", "org.in", "gov.in", "ac.in", "edu.in",
        "co.kr", "or.kr", "ne.kr", "go.kr", "ac.kr",
        "com.tw", "org.tw", "net.tw", "gov.tw", "edu.tw",
        "com.hk", "org.hk", "net.hk", "gov.hk", "edu.hk",
        "com.sg", "org.sg", "net.sg", "gov.sg", "edu.sg",
        "com.tr", "org.tr", "net.tr", "gov.tr", "edu.tr",
        "com.ar", "org.ar", "net.ar", "gob.ar",
        "co.il", "org.il", "ac.il", "gov.il",
        "com.ru", "org.ru", "net.ru",
        "com.ua", "org.ua", "net.ua", "gov.ua",
        "co.id", "or.id", "ac.id", "go.id",
        "com.my", "org.my", "net.my", "gov.my",
        "com.ph", "org.ph", "net.ph", "gov.ph",
        "com.vn", "net.vn", "org.vn", "gov.vn",
        "com.pl", "net.pl", "org.pl",
        "com.es", "org.es", "nom.es", "gob.es",
        "com.pt", "org.pt", "gov.pt",
        "com.co", "net.co", "org.co", "gov.co",
        "com.pe", "org.pe", "gob.pe",
        "com.eg", "org.eg", "gov.eg",
        "com.sa", "org.sa", "gov.sa",
        "co.th", "or.th", "ac.th", "go.th", "in.th",
        "github.io", "gitlab.io", "herokuapp.com", "appspot.com", "blogspot.com", "cloudfront.net",
        "azurewebsites.net", "azurestaticapps.net", "netlify.app", "vercel.app", "pages.dev", "workers.dev",
        "web.app", "firebaseapp.com", "s3.amazonaws.com", "elasticbeanstalk.com", "fly.dev", "onrender.com",
        "glitch.me", "repl.co", "ngrok.io", "ngrok-free.app", "readthedocs.io", "now.sh", "surge.sh",
        "dyndns.org", "no-ip.org", "duckdns.org",
    ]

    /// `host` without the brackets of an IPv6 literal.
    static func normalizedHost(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    /// The value of attribute `name` (case-insensitive) in a `Set-Cookie` line, the last one given; nil when absent.
    static func attribute(_ name: String, in line: String) -> String? {
        var found: String?
        for part in line.split(separator: ";").dropFirst() {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = pieces[0].trimmingCharacters(in: .whitespaces)
            guard key.caseInsensitiveCompare(name) == .orderedSame else { continue }
            found = pieces.count > 1 ? pieces[1].trimmingCharacters(in: .whitespaces) : ""
        }
        return found
    }
}
