import Foundation

/// Which proxy a request goes through: the configuration's own, or the environment's as curl reads it.
enum ProxyRules {
    /// The proxy for a request to `url`.
    ///
    /// An explicit proxy applies to every request. From the environment: `https_proxy`/`HTTPS_PROXY` for https,
    /// `http_proxy` (lower case only, as curl: `HTTP_PROXY` can be set by a CGI request's `Proxy:` header) for http,
    /// else `all_proxy`/`ALL_PROXY`; `no_proxy`/`NO_PROXY` lists hosts that go direct (`*` for all; a name matches
    /// itself and its subdomains, with or without a leading dot; an IP address matches itself).
    ///
    /// `environment` defaults to the process's, read only when `usesEnvironment` (building that dictionary cost
    /// about 11 % of a small GET's CPU when it was read for every load).
    ///
    /// - Throws: `URLError(.badURL)` naming the variable when the chosen proxy cannot be used (a scheme other than
    ///   http, socks5 or socks5h, no host, a port out of range): the load fails rather than go direct.
    static func proxy(
        for url: URL,
        explicit: URLConnection.Proxy?,
        usesEnvironment: Bool,
        environment: [String: String]? = nil
    ) throws -> URLConnection.Proxy? {
        if let explicit { return explicit }
        guard usesEnvironment, let host = url.host?.lowercased() else { return nil }
        let environment = environment ?? ProcessInfo.processInfo.environment
        func value(_ names: String...) -> (name: String, value: String)? {
            names.lazy.compactMap { name in environment[name].map { (name: name, value: $0) } }
                .first { !$0.value.isEmpty }
        }
        let isHTTPS = url.scheme?.lowercased() == "https"
        let chosen =
            isHTTPS
            ? value("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")
            : value("http_proxy", "all_proxy", "ALL_PROXY")
        guard let chosen else { return nil }
        if let exclusions = value("no_proxy", "NO_PROXY"), Self.excludes(exclusions.value, host: host) { return nil }
        do {
            return try URLConnection.Proxy(url: chosen.value)
        } catch {
            let reason = (error as? URLError)?.userInfo[NSLocalizedDescriptionKey] as? String ?? "\(error)"
            throw URLError(
                .badURL,
                userInfo: [
                    NSLocalizedDescriptionKey: "the proxy in \(chosen.name) cannot be used: \(reason)",
                    NSUnderlyingErrorKey: error as NSError,
                ]
            )
        }
    }

    /// Whether the `no_proxy` list `list` names `host`.
    static func excludes(_ list: String, host: String) -> Bool {
        let host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        for entry in list.split(separator: ",") {
            var name = entry.trimmingCharacters(in: .whitespaces).lowercased()
            if name == "*" { return true }
            if name.hasPrefix(".") { name.removeFirst() }
            if name.hasPrefix("[") && name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
            guard !name.isEmpty else { continue }
            if host == name || host.hasSuffix("." + name) { return true }
        }
        return false
    }
}
