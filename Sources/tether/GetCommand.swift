import ArgumentParser
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import TetherConcurrency
import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#endif

/// `tether get`: an HTTP(S) request through `URLConnection.download` (with `-o`) or `data(for:)` (to stdout), a GET
/// unless `-X` or `-d` says otherwise; `--ca` and `--insecure` as curl's `--cacert` and `-k`.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "HTTP(S) request through URLConnection (GET unless -X or -d); the body goes to stdout or to a file."
    )

    @Argument(help: "The http or https URL.")
    var url: String

    @Option(name: .shortAndLong, help: "Write the body to FILE (replaced atomically) instead of stdout.")
    var output: String?

    @Flag(
        name: .customLong("continue"),
        help: ArgumentHelp(
            "With -o: continue the download that a cut or an interruption left (as curl's -C -), from the resume data "
                + "kept in FILE.tether-resume; the whole file when there is none or the resource changed."
        )
    )
    var continueDownload = false

    @Flag(help: "Do not draw a progress bar on standard error.")
    var noProgress = false

    @Option(name: .customLong("header"), help: "An extra request header, 'Name: value' (repeatable).")
    var headers: [String] = []

    @Flag(help: "Bypass the response cache.")
    var noCache = false

    @Option(
        help: ArgumentHelp(
            "Go through this proxy: http://[USER:PASSWORD@]HOST[:PORT] or socks5://HOST[:PORT] (port 1080 by default).",
            valueName: "url"
        )
    )
    var proxy: String?

    @Flag(help: "Use the proxy that http_proxy, https_proxy, all_proxy and no_proxy name, as curl reads them.")
    var proxyFromEnvironment = false

    @Flag(help: "Print the load's metrics on standard error: each transaction's protocol, times and byte counts.")
    var metrics = false

    @Option(
        name: [.customShort("X"), .customLong("request")],
        help: ArgumentHelp("The request method (GET, or POST with -d).", valueName: "method")
    )
    var method: String?

    @Option(
        name: [.customShort("d"), .customLong("data")],
        help: ArgumentHelp(
            "Send DATA as the body, as curl: @FILE reads a file (@- standard input) without its CR and LF, several "
                + "are joined with '&', the method becomes POST and the type application/x-www-form-urlencoded.",
            valueName: "data"
        )
    )
    var data: [String] = []

    @Option(
        name: [.customLong("ca"), .customLong("cacert")],
        help: ArgumentHelp("Trust only the certificate authorities in this PEM file for https.", valueName: "file")
    )
    var ca: String?

    @Flag(
        name: [.customShort("k"), .customLong("insecure")],
        help: "Verify nothing about the server's certificate (testing only: anyone on the way can read and change it)."
    )
    var insecure = false

    @OptionGroup var common: CommonOptions

    func validate() throws {
        guard let parsed = URL(string: self.url), URLConnection.canHandle(URLRequest(url: parsed)) else {
            throw ValidationError("not an http(s) URL with a host: \(self.url)")
        }
        if metrics && output != nil { throw ValidationError("--metrics goes with the body on stdout, not with -o.") }
        if continueDownload && output == nil { throw ValidationError("--continue needs -o FILE.") }
        if let proxy {
            do {
                _ = try URLConnection.Proxy(url: proxy)
            } catch {
                throw ValidationError("--proxy: \((error as? URLError)?.localizedDescription ?? "\(error)")")
            }
        }
        for header in self.headers where Self.split(header) == nil {
            throw ValidationError("a header must look like 'Name: value', got '\(header)'")
        }
        if let method, !Self.isToken(method) {
            throw ValidationError("-X: not an HTTP method: '\(method)'")
        }
        if let ca {
            do {
                _ = try NIOSSLCertificate.fromPEMFile(ca)
            } catch {
                throw ValidationError("--ca: no PEM certificate could be read from \(ca): \(error)")
            }
        }
    }

    /// The metrics as lines, one per transaction and a total, with times in milliseconds from the load's start.
    static func describe(_ metrics: URLConnectionMetrics) -> [String] {
        let start = metrics.taskInterval.start
        func ms(_ date: Date?) -> String {
            date.map { String(format: "%.1f", $0.timeIntervalSince(start) * 1000) } ?? "-"
        }
        var lines = metrics.transactions.enumerated().map { index, transaction in
            let status = transaction.response.map { "\($0.statusCode)" } ?? "-"
            let source = transaction.resourceFetchType == .localCache ? "cache" : transaction.networkProtocolName ?? "-"
            return "metrics: \(index + 1) \(transaction.request.httpMethod ?? "GET") "
                + "\(transaction.request.url.map { Self.withoutPassword($0.absoluteString) } ?? "-") \(status) \(source) "
                + "start \(ms(transaction.fetchStartDate)) sent \(ms(transaction.requestStartDate)) "
                + "first-byte \(ms(transaction.responseStartDate)) end \(ms(transaction.responseEndDate)) ms, "
                + "\(transaction.countOfRequestBodyBytesSent) bytes out, \(transaction.countOfResponseBodyBytesReceived) in"
        }
        lines.append(
            "metrics: total \(String(format: "%.1f", metrics.taskInterval.duration * 1000)) ms, "
                + "\(metrics.redirectCount) redirects"
        )
        return lines
    }

    /// `url` with the password of its user info left out (`http://ann:secret@h/` → `http://ann@h/`): what the
    /// command prints never shows one.
    static func withoutPassword(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = nil
        return components.string ?? url
    }

    static func split(_ header: String) -> (String, String)? {
        guard let colon = header.firstIndex(of: ":") else { return nil }
        let name = header[..<colon].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return nil }
        return (name, header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }

    func run() async throws {
        // A download to a file ends on a signal itself, after keeping what it can resume from.
        if self.output == nil { Terminal.exitOnSignals() }
        var request = URLRequest(url: URL(string: self.url)!)
        for header in self.headers {
            if let (name, value) = Self.split(header) { request.addValue(value, forHTTPHeaderField: name) }
        }
        if self.noCache { request.cachePolicy = .reloadIgnoringLocalCacheData }
        try self.applyMethodAndBody(to: &request)
        var logger: Logger?
        if self.common.verbose {
            var verbose = Logger(label: "tether.get") { label in StreamLogHandler.standardError(label: label) }
            verbose.logLevel = .debug
            logger = verbose
        }
        var configuration = URLConnection.Configuration(responseCache: self.noCache ? nil : .shared, logger: logger)
        configuration.proxy = try self.proxy.map { try URLConnection.Proxy(url: $0) }
        configuration.usesEnvironmentProxy = self.proxyFromEnvironment
        configuration.tlsConfiguration = try self.tlsConfiguration()
        if self.insecure {
            Terminal.error("warning: --insecure: the server's certificate is not verified")
        }
        do {
            if let output = self.output {
                let bar = !self.noProgress && isatty(STDERR_FILENO) == 1 ? ProgressBar() : nil
                let destination = URL(fileURLWithPath: output)
                var progress: (@Sendable (DownloadProgress) -> Void)?
                if let bar { progress = { bar.update($0) } }
                let response = try await self.download(
                    request,
                    to: output,
                    configuration: configuration,
                    progress: progress
                )
                bar?.finish()
                let attributes = try? FileManager.default.attributesOfItem(atPath: destination.path)
                let size = (attributes?[.size] as? NSNumber)?.intValue ?? 0
                Terminal.error("HTTP \(response.statusCode) \(size) bytes")
            } else {
                let (data, response, metrics) = try await URLConnection.dataAndMetrics(
                    for: request,
                    configuration: configuration
                )
                Terminal.output(data)
                if self.metrics { for line in Self.describe(metrics) { Terminal.error(line) } }
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                Terminal.error("HTTP \(status) \(data.count) bytes")
                guard (200..<300).contains(status) else { throw ExitCode.failure }
            }
        } catch let error as URLError {
            let url = Self.withoutPassword(error.failingURL?.absoluteString ?? self.url)
            Terminal.error("error: \(error.localizedDescription) (\(url))")
            throw ExitCode.failure
        }
    }
}

/// A one-line progress bar on standard error, redrawn in place.
private final class ProgressBar: Sendable {
    /// Serialises the redraws (it guards standard error, not a value: the box holds none).
    private let output = LockedBox(())

    func update(_ progress: DownloadProgress) {
        self.output.withLock { _ in
            let megabytes = Double(progress.totalBytesWritten) / 1_048_576
            let line: String
            if let fraction = progress.fractionCompleted {
                let filled = Int(fraction * 30)
                let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: 30 - filled)
                line = String(format: "\r[%@] %3d%% %.1f MiB", bar, Int(fraction * 100), megabytes)
            } else {
                line = String(format: "\r%.1f MiB", megabytes)
            }
            Terminal.errorOutput(Data(line.utf8))
        }
    }

    func finish() {
        self.output.withLock { _ in Terminal.errorOutput(Data("\n".utf8)) }
    }
}

/// The demo's HTTP step: an in-process NIO HTTP/1.1 server on 127.0.0.1, two GETs through `URLConnection` with a
/// private cache; the second is revalidated (the server answers 304) and its body comes from the cache, with its
/// metrics.
func runHTTPDemoStep() async throws -> String {
    let counter = DemoHTTPCounter()
    let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                try channel.pipeline.syncOperations.addHandler(DemoHTTPHandler(counter: counter))
            }
        }
        .bind(host: "127.0.0.1", port: 0)
        .get()
    defer { server.close(promise: nil) }
    guard let port = server.localAddress?.port else { throw HTTPDemoFailure(description: "server has no port") }

    let cache = HTTPResponseCache(memoryCapacity: 1 << 20)
    let configuration = URLConnection.Configuration(responseCache: cache)
    let request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/greeting")!)
    let (first, firstResponse) = try await URLConnection.data(for: request, configuration: configuration)
    let (second, secondResponse, metrics) = try await URLConnection.dataAndMetrics(
        for: request,
        configuration: configuration
    )
    let status = (firstResponse as? HTTPURLResponse)?.statusCode ?? 0
    let (full, notModified) = counter.snapshot
    guard status == 200, (secondResponse as? HTTPURLResponse)?.statusCode == 200, first == second,
        full == 1, notModified == 1, metrics.transactions.count == 1,
        let revalidation = metrics.transactions.first, revalidation.resourceFetchType == .networkLoad
    else {
        throw HTTPDemoFailure(
            description: "expected 200 then a 304 served from cache, got \(full) full and \(notModified) 304 answers"
        )
    }
    let milliseconds = Int((metrics.taskInterval.duration * 1000).rounded())
    return "GET \(status) \(first.count) bytes; second GET revalidated (server answered 304), body from the cache; "
        + "its metrics: 1 transaction, \(revalidation.networkProtocolName ?? "?"), \(milliseconds) ms"
}

struct HTTPDemoFailure: Error, CustomStringConvertible {
    var description: String
}

/// Counts the demo server's full and 304 answers, from its event loop, for the demo's check.
private final class DemoHTTPCounter: Sendable {
    private let counts = LockedBox((full: 0, notModified: 0))

    func count(notModified isNotModified: Bool) {
        self.counts.withLock { counts in
            if isNotModified { counts.notModified += 1 } else { counts.full += 1 }
        }
    }

    var snapshot: (Int, Int) { self.counts.withLock { ($0.full, $0.notModified) } }
}

@available(*, unavailable)
extension DemoHTTPHandler: Sendable {}

/// Serves `/greeting` with an ETag and `max-age=0`, answering `If-None-Match` with 304.
private final class DemoHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private static let etag = "\"tether-demo-1\""
    private let counter: DemoHTTPCounter
    private var head: HTTPRequestHead?

    init(counter: DemoHTTPCounter) {
        self.counter = counter
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body:
            break
        case .end:
            guard let head = self.head else { return }
            let isNotModified = head.headers["If-None-Match"].contains(Self.etag)
            self.counter.count(notModified: isNotModified)
            let body = ByteBuffer(string: "Hello from Tether's demo server\n")
            var headers = HTTPHeaders([("ETag", Self.etag), ("Cache-Control", "max-age=0")])
            if !isNotModified { headers.add(name: "Content-Length", value: "\(body.readableBytes)") }
            let status: HTTPResponseStatus = isNotModified ? .notModified : .ok
            context.write(
                self.wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
                promise: nil
            )
            if !isNotModified { context.write(self.wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
            context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
            self.head = nil
        }
    }
}
