import ArgumentParser
import TetherSockets

/// `--proxy`, `--proxy-from-environment`: the proxy `nc` connects through.
struct ProxyOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Connect through this proxy: socks5://[USER:PASS@]HOST:PORT (SOCKS5) or http://[USER:PASS@]HOST:PORT "
                + "(HTTP CONNECT).",
            valueName: "url"
        )
    )
    var proxy: String?

    @Flag(
        help: ArgumentHelp(
            "Connect through the proxy that ALL_PROXY (or HTTPS_PROXY, with --tls) names, unless NO_PROXY excludes "
                + "the host, as curl reads them."
        )
    )
    var proxyFromEnvironment = false

    /// Checks the combination; `listen`/`udp` when the command would not connect over TCP.
    func check(listen: Bool, udp: Bool) throws {
        guard proxy != nil || proxyFromEnvironment else { return }
        if proxy != nil && proxyFromEnvironment {
            throw ValidationError("--proxy and --proxy-from-environment do not go together.")
        }
        if listen { throw ValidationError("--proxy does not go with --listen.") }
        if udp { throw ValidationError("--proxy does not go with --udp.") }
        if let proxy {
            do {
                _ = try ProxyConfiguration(url: proxy)
            } catch let error as ProxyError {
                throw ValidationError("--proxy: \(error.message).")
            }
        }
    }

    /// The proxy for a connection to `host`, or nil to connect directly.
    /// - Throws: ``ProxyError`` when the environment's proxy URL cannot be used.
    func configuration(host: String, port: Int, secure: Bool) throws -> ProxyConfiguration? {
        if let proxy { return try ProxyConfiguration(url: proxy) }
        guard proxyFromEnvironment else { return nil }
        return try ProxyConfiguration.fromEnvironment(host: host, port: port, secure: secure)
    }
}
