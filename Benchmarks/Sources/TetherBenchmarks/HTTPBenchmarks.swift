import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `URLConnection` (delegate face, `data(for:)`, `download(_:to:)`) beside raw AsyncHTTPClient and
/// Foundation's `URLSession`, all against one HTTP/1.1 peer in a child process (`--peer http`).
enum HTTPBenchmarks {
    static let bigBytes = 200 << 20
    /// The peak RSS growth allowed for the 200 MiB download through `download(_:to:)` and a file-writing delegate.
    static let memoryCeiling = 32 << 20

    static func run(quick: Bool) async throws {
        let gets = quick ? 1_000 : 10_000
        let peer = try PeerProcess(mode: .http, bytes: bigBytes)
        defer { peer.stop() }
        let small = URL(string: "http://127.0.0.1:\(peer.port)/small")!
        let big = URL(string: "http://127.0.0.1:\(peer.port)/big")!
        // Files go to tmpfs when there is one, so that the disk's speed does not drown the clients' differences.
        let directory = URL(
            fileURLWithPath: FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        )
        .appendingPathComponent("tether-http-bench-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        // Raw AHC with the settings of Tether's engine (HTTPEngine): no redirects, decompression on.
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(75)),
            decompression: .enabled(limit: .ratio(25))
        )
        configuration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        var readTimeoutConfiguration = configuration
        readTimeoutConfiguration.timeout = .init(connect: .seconds(60), read: .seconds(60))
        let readTimeoutClient = HTTPClient(
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            configuration: readTimeoutConfiguration
        )
        // Raw AHC with exactly the settings of Tether's delegate-face engine, which also turns tracing off when no
        // tracer is bootstrapped (`HTTPEngine`): for the diagnostic of Tether's design without Tether's steps.
        var engineConfiguration = configuration
        engineConfiguration.tracing.tracer = nil
        let engineLikeClient = HTTPClient(
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            configuration: engineConfiguration
        )
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.urlCache = nil
        let session = URLSession(configuration: sessionConfiguration)
        let queue = OperationQueue()
        let serialQueue = OperationQueue()
        serialQueue.maxConcurrentOperationCount = 1

        // One request each before the rounds: connections and Tether's lazily created engine exist when timing starts.
        try check(try await rawGet(client, small), 1024)
        try check(try await rawGet(readTimeoutClient, small), 1024)
        try check(try await rawGet(engineLikeClient, small), 1024)
        try check(try await delegateLoad(small, queue: queue, sink: .collect), 1024)
        try check(try await URLConnection.data(for: URLRequest(url: small)).0.count, 1024)
        try check(try await sessionGet(session, small), 1024)

        let times = BestTimes()
        try await runSuite(
            "HTTP: \(gets) sequential keep-alive GETs of 1 KiB",
            unit: "req/s",
            amount: Double(gets),
            variants: [
                times.variant("raw AsyncHTTPClient") {
                    for _ in 0..<gets { try check(try await rawGet(client, small), 1024) }
                },
                // Diagnostics: what `data(for:)` must do beyond raw AHC whatever its implementation. Its engine has an
                // idle-read timeout (NSURLConnection's `timeoutInterval`), and it returns Foundation's
                // `HTTPURLResponse`, whose initialiser canonicalises every header name.
                times.variant("raw AsyncHTTPClient, read timeout") {
                    for _ in 0..<gets { try check(try await rawGet(readTimeoutClient, small), 1024) }
                },
                times.variant("raw AsyncHTTPClient, read timeout, HTTPURLResponse") {
                    for _ in 0..<gets { try check(try await rawGetResponse(readTimeoutClient, small), 1024) }
                },
                // Diagnostic: the same requests, each in a task of its own that the caller awaits, as HTTPLoad does.
                times.variant("raw AsyncHTTPClient, a Task per request") {
                    for _ in 0..<gets { try check(try await Task { try await rawGet(client, small) }.value, 1024) }
                },
                // Diagnostic: the least that NSURLConnection's contract costs on top of raw AHC. Its canonical
                // `willSend` runs on the delegate queue before the request goes out, and the response, data and
                // finish run there too: one queue operation each way, the request made from the first with AHC's
                // future API (no task), the whole body delivered in the second.
                times.variant("raw AsyncHTTPClient, with the delegate queue's two hops") {
                    for _ in 0..<gets { try check(try await rawGetThroughQueue(client, small, queue: queue), 1024) }
                },
                // Diagnostic: the least any delegate face can cost once the canonical `willSend` is known to be the
                // default (Tether's case): the request made from the caller, one queue operation for the response,
                // data and finish.
                times.variant("raw AsyncHTTPClient, with one hop to the delegate queue") {
                    for _ in 0..<gets { try check(try await rawGetThenQueue(client, small, queue: queue), 1024) }
                },
                // Diagnostic: Tether's design without Tether's steps. The request made with AHC's async API (an engine
                // with Tether's settings) from a task whose jobs run on the event loop that resumed the last one (as
                // `FlushingExecutor` does), then one queue operation; the delegate face's ratio to it is what the
                // load's own steps cost.
                times.variant("raw AsyncHTTPClient, in a task on the event loop, one hop") {
                    for _ in 0..<gets {
                        try check(try await rawOnLoopThenQueue(engineLikeClient, small, queue: queue), 1024)
                    }
                },
                times.variant("URLConnection delegate (queue)") {
                    for _ in 0..<gets { try check(try await delegateLoad(small, queue: queue, sink: .collect), 1024) }
                },
                times.variant("URLConnection data(for:)") {
                    for _ in 0..<gets {
                        try check(try await URLConnection.data(for: URLRequest(url: small)).0.count, 1024)
                    }
                },
                times.variant("URLSession dataTask") {
                    for _ in 0..<gets { try check(try await sessionGet(session, small), 1024) }
                },
            ],
            baselines: [
                "raw AsyncHTTPClient, a Task per request": "raw AsyncHTTPClient",
                "raw AsyncHTTPClient, with the delegate queue's two hops": "raw AsyncHTTPClient",
                "raw AsyncHTTPClient, with one hop to the delegate queue": "raw AsyncHTTPClient",
                "raw AsyncHTTPClient, in a task on the event loop, one hop": "raw AsyncHTTPClient",
                "raw AsyncHTTPClient, read timeout": "raw AsyncHTTPClient",
                "raw AsyncHTTPClient, read timeout, HTTPURLResponse": "raw AsyncHTTPClient",
                "URLConnection delegate (queue)": "raw AsyncHTTPClient",
                "URLConnection data(for:)": "raw AsyncHTTPClient",
                "URLSession dataTask": "raw AsyncHTTPClient",
            ]
        )
        times.printRatios(
            [
                ("URLConnection delegate (queue)", "URLSession dataTask", "≥ 1.5×"),
                ("URLConnection data(for:)", "URLSession dataTask", "≥ 1.5×"),
                ("URLConnection delegate (queue)", "raw AsyncHTTPClient", "≥ 0.9×"),
                ("URLConnection data(for:)", "raw AsyncHTTPClient", "≥ 0.95×"),
                // The bound of the delegate-face target: raw AHC itself, with the one hop the contract requires.
                ("raw AsyncHTTPClient, with one hop to the delegate queue", "raw AsyncHTTPClient", "(floor)"),
                (
                    "URLConnection delegate (queue)", "raw AsyncHTTPClient, with one hop to the delegate queue",
                    "(vs floor)"
                ),
                (
                    "URLConnection delegate (queue)", "raw AsyncHTTPClient, in a task on the event loop, one hop",
                    "(the load's own steps)"
                ),
            ]
        )

        let file = directory.appendingPathComponent("big.bin")
        let downloads = BestTimes()
        try await runSuite(
            "HTTP: one \(bigBytes >> 20) MiB download (Content-Length), files on \(directory.deletingLastPathComponent().path)",
            unit: "B/s",
            amount: Double(bigBytes),
            variants: [
                downloads.variant("raw AsyncHTTPClient, counting") {
                    try check(try await rawDownload(client, big, to: nil), bigBytes)
                },
                // Diagnostic: the least that delivering chunks on a delegate queue costs. Raw AHC's stream, each
                // chunk handed to the queue as `Data` (no copy, as URLConnection does) without any flow control,
                // and the count read there once the last operation ran.
                downloads.variant("raw AsyncHTTPClient, counting on the delegate queue") {
                    try check(try await rawDownloadCountingOnQueue(client, big, queue: serialQueue), bigBytes)
                },
                downloads.variant("raw AsyncHTTPClient → file") {
                    try check(try await rawDownload(client, big, to: file), bigBytes)
                },
                downloads.variant("URLConnection delegate, counting") {
                    try check(try await delegateLoad(big, queue: queue, sink: .count), bigBytes)
                },
                downloads.variant("URLConnection delegate → file") {
                    try check(try await delegateLoad(big, queue: queue, sink: .file(file)), bigBytes)
                },
                downloads.variant("URLConnection download(_:to:)") {
                    _ = try await URLConnection.download(URLRequest(url: big), to: file)
                    try check(try fileSize(file), bigBytes)
                    try FileManager.default.removeItem(at: file)
                },
                downloads.variant("URLSession downloadTask") {
                    try check(try await sessionDownload(session, big), bigBytes)
                },
            ],
            baselines: [
                "raw AsyncHTTPClient, counting on the delegate queue": "raw AsyncHTTPClient, counting",
                "URLConnection delegate, counting": "raw AsyncHTTPClient, counting",
                "URLConnection delegate → file": "raw AsyncHTTPClient → file",
                "URLConnection download(_:to:)": "raw AsyncHTTPClient → file",
                "URLSession downloadTask": "raw AsyncHTTPClient → file",
            ]
        )
        downloads.printRatios(
            [
                ("URLConnection delegate, counting", "raw AsyncHTTPClient, counting", "≥ 0.9×"),
                ("URLConnection delegate → file", "raw AsyncHTTPClient → file", "≥ 0.9×"),
                ("URLConnection download(_:to:)", "raw AsyncHTTPClient → file", "≥ 0.9×"),
                ("URLConnection download(_:to:)", "URLSession downloadTask", "—"),
            ]
        )
        downloads.printMemory(
            ["URLConnection delegate → file", "URLConnection download(_:to:)"],
            ceiling: memoryCeiling
        )

        session.finishTasksAndInvalidate()
        try await client.shutdown()
        try await readTimeoutClient.shutdown()
        try await engineLikeClient.shutdown()
    }

    static func check(_ count: Int, _ expected: Int) throws {
        if count != expected { throw BenchmarkError(description: "received \(count) of \(expected) bytes") }
    }

    static func fileSize(_ url: URL) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue ?? -1
    }

    // MARK: - Raw AsyncHTTPClient

    static func rawGet(_ client: HTTPClient, _ url: URL) async throws -> Int {
        let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(60))
        guard response.status == .ok else { throw BenchmarkError(description: "HTTP \(response.status)") }
        return try await response.body.collect(upTo: 1 << 20).readableBytes
    }

    /// `rawGet`, then the `HTTPURLResponse` that a Foundation-shaped API hands back (headers joined as Tether does).
    static func rawGetResponse(_ client: HTTPClient, _ url: URL) async throws -> Int {
        let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(60))
        guard response.status == .ok else { throw BenchmarkError(description: "HTTP \(response.status)") }
        var fields: [String: String] = [:]
        for (name, value) in response.headers { fields[name] = fields[name].map { $0 + ", " + value } ?? value }
        let body = try await response.body.collect(upTo: 1 << 20)
        let foundationResponse = HTTPURLResponse(
            url: url,
            statusCode: Int(response.status.code),
            httpVersion: "HTTP/1.1",
            headerFields: fields
        )
        guard foundationResponse?.statusCode == 200 else { throw BenchmarkError(description: "no response") }
        return Data(body.readableBytesView).count
    }

    static func rawGetThroughQueue(_ client: HTTPClient, _ url: URL, queue: OperationQueue) async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            queue.addOperation {
                client.execute(request: try! HTTPClient.Request(url: url.absoluteString)).whenComplete { result in
                    queue.addOperation {
                        resume(continuation, with: result)
                    }
                }
            }
        }
    }

    /// Resumes `continuation` with the body length of a 200 response, else with an error.
    static func resume(
        _ continuation: CheckedContinuation<Int, any Error>,
        with result: Result<HTTPClient.Response, any Error>
    ) {
        switch result {
        case .success(let response) where response.status == .ok:
            continuation.resume(returning: response.body?.readableBytes ?? 0)
        case .success(let response):
            continuation.resume(throwing: BenchmarkError(description: "HTTP \(response.status)"))
        case .failure(let error):
            continuation.resume(throwing: error)
        }
    }

    static func rawGetThenQueue(_ client: HTTPClient, _ url: URL, queue: OperationQueue) async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            client.execute(request: try! HTTPClient.Request(url: url.absoluteString)).whenComplete { result in
                queue.addOperation {
                    resume(continuation, with: result)
                }
            }
        }
    }

    /// Runs a task's jobs on the event loop that enqueues them, else on the loop that did so last.
    final class LoopExecutor: TaskExecutor {
        let group = MultiThreadedEventLoopGroup.singleton
        let hint = NIOLockedValueBox<(any EventLoop)?>(nil)

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            let loop: any EventLoop
            if let current = MultiThreadedEventLoopGroup.currentEventLoop {
                loop = current
                self.hint.withLockedValue { $0 = current }
            } else {
                loop = self.hint.withLockedValue { $0 } ?? self.group.next()
            }
            loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }
    static let loopExecutor = LoopExecutor()

    static func rawOnLoopThenQueue(_ client: HTTPClient, _ url: URL, queue: OperationQueue) async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            Task(executorPreference: loopExecutor) {
                do {
                    let response = try await client.execute(
                        HTTPClientRequest(url: url.absoluteString),
                        timeout: .seconds(60)
                    )
                    let body = try await response.body.collect(upTo: 1 << 20)
                    queue.addOperation { continuation.resume(returning: body.readableBytes) }
                } catch {
                    queue.addOperation { continuation.resume(throwing: error) }
                }
            }
        }
    }

    static func rawDownloadCountingOnQueue(
        _ client: HTTPClient,
        _ url: URL,
        queue: OperationQueue
    ) async throws
        -> Int
    {
        let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(600))
        guard response.status == .ok else { throw BenchmarkError(description: "HTTP \(response.status)") }
        final class Counter: @unchecked Sendable { var count = 0 }
        let counter = Counter()
        for try await chunk in response.body {
            let data = chunk.getData(at: chunk.readerIndex, length: chunk.readableBytes, byteTransferStrategy: .noCopy)!
            queue.addOperation { counter.count += data.count }
        }
        return await withCheckedContinuation { continuation in
            queue.addOperation { continuation.resume(returning: counter.count) }
        }
    }

    /// Streams the body without keeping it: counts it, or writes it to a temporary file that is synced and renamed
    /// onto `file` (what `download(_:to:)` does), then removed.
    static func rawDownload(_ client: HTTPClient, _ url: URL, to file: URL?) async throws -> Int {
        let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(600))
        guard response.status == .ok else { throw BenchmarkError(description: "HTTP \(response.status)") }
        var count = 0
        guard let file else {
            for try await chunk in response.body { count += chunk.readableBytes }
            return count
        }
        let temporary = file.appendingPathExtension("part")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil),
            let handle = FileHandle(forWritingAtPath: temporary.path)
        else { throw BenchmarkError(description: "cannot create \(temporary.path)") }
        for try await chunk in response.body {
            try chunk.withUnsafeReadableBytes { try handle.write(contentsOf: $0) }
            count += chunk.readableBytes
        }
        try handle.synchronize()
        try handle.close()
        guard rename(temporary.path, file.path) == 0 else { throw BenchmarkError(description: "rename failed") }
        try FileManager.default.removeItem(at: file)
        return count
    }

    // MARK: - URLConnection delegate face

    /// Loads `url` through a delegate on `queue`; returns the body length.
    static func delegateLoad(_ url: URL, queue: OperationQueue, sink: BodyDelegate.Sink) async throws -> Int {
        let delegate = try BodyDelegate(sink: sink)
        return try await withCheckedThrowingContinuation { continuation in
            delegate.continuation = continuation
            let connection = URLConnection(request: URLRequest(url: url), delegate: delegate, startImmediately: false)!
            connection.setDelegateQueue(queue)
            connection.start()
        }
    }

    // MARK: - URLSession

    static func sessionGet(_ session: URLSession, _ url: URL) async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: url) { data, response, error in
                if let error { return continuation.resume(throwing: error) }
                guard (response as? HTTPURLResponse)?.statusCode == 200 else {
                    return continuation.resume(
                        throwing: BenchmarkError(description: "bad response \(String(describing: response))")
                    )
                }
                continuation.resume(returning: data?.count ?? 0)
            }.resume()
        }
    }

    /// A download task; the size of the file it hands over is the result (the file is removed).
    static func sessionDownload(_ session: URLSession, _ url: URL) async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            session.downloadTask(with: url) { location, response, error in
                if let error { return continuation.resume(throwing: error) }
                guard let location, (response as? HTTPURLResponse)?.statusCode == 200 else {
                    return continuation.resume(
                        throwing: BenchmarkError(description: "bad response \(String(describing: response))")
                    )
                }
                let size = (try? fileSize(location)) ?? -1
                try? FileManager.default.removeItem(at: location)
                continuation.resume(returning: size)
            }.resume()
        }
    }
}

/// A data delegate that collects the body, counts it, or writes each chunk to a file (synced and removed at the end).
/// Its callbacks run one at a time on the connection's delegate queue.
final class BodyDelegate: URLConnectionDataDelegate, @unchecked Sendable {
    enum Sink {
        case collect
        case count
        case file(URL)

        var collects: Bool {
            if case .collect = self { return true }
            return false
        }
    }

    var continuation: CheckedContinuation<Int, any Error>?
    private var body = Data()
    private var count = 0
    private var status = 0
    private let handle: FileHandle?
    private let file: URL?
    private let collects: Bool

    init(sink: Sink) throws {
        switch sink {
        case .collect, .count:
            handle = nil
            file = nil
            collects = sink.collects
        case .file(let url):
            guard FileManager.default.createFile(atPath: url.path, contents: nil),
                let handle = FileHandle(forWritingAtPath: url.path)
            else { throw BenchmarkError(description: "cannot create \(url.path)") }
            self.handle = handle
            file = url
            collects = false
        }
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        status = (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        count += data.count
        if collects {
            body.append(data)
        } else if let handle {
            do {
                try handle.write(contentsOf: data)
            } catch {
                connection.cancel()
                finish(.failure(error))
            }
        }
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        guard status == 200 else { return finish(.failure(BenchmarkError(description: "HTTP \(status)"))) }
        finish(.success(collects ? body.count : count))
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        finish(.failure(error))
    }

    private func finish(_ result: Result<Int, any Error>) {
        var result = result
        if let handle, let file {
            do {
                try handle.synchronize()
                try handle.close()
                try FileManager.default.removeItem(at: file)
            } catch {
                result = .failure(error)
            }
        }
        continuation?.resume(with: result)
        continuation = nil
    }
}

/// Each variant's best time and peak RSS growth, measured around its body, for ratios against more than the one
/// baseline that `runSuite` prints.
final class BestTimes: @unchecked Sendable {
    private let lock = NSLock()
    private var best: [String: Double] = [:]
    private var peaks: [String: Int] = [:]

    func variant(_ name: String, _ body: @escaping () async throws -> Void) -> Variant {
        Variant(name: name) {
            let before = residentBytes()
            let start = now()
            let (_, peak) = try await withPeakMemory { try await body() }
            let seconds = now() - start
            self.lock.withLock {
                self.best[name] = min(self.best[name] ?? .infinity, seconds)
                self.peaks[name] = max(self.peaks[name] ?? 0, peak - before)
            }
        }
    }

    /// Prints `variant` against `baseline` as a rate ratio (baseline time / variant time), with its target.
    func printRatios(_ pairs: [(String, String, String)]) {
        let (best, _) = lock.withLock { (self.best, self.peaks) }
        print("| variant | vs | ratio | target |")
        print("|---|---|---|---|")
        for (name, baseline, target) in pairs {
            guard let seconds = best[name], let baseSeconds = best[baseline] else { continue }
            print("| \(name) | \(baseline) | \(String(format: "%.2f×", baseSeconds / seconds)) | \(target) |")
        }
    }

    func printMemory(_ names: [String], ceiling: Int) {
        let peaks = lock.withLock { self.peaks }
        print("| variant | peak RSS growth | ceiling | met |")
        print("|---|---|---|---|")
        for name in names {
            guard let peak = peaks[name] else { continue }
            print("| \(name) | \(mib(peak)) | \(mib(ceiling)) | \(peak < ceiling ? "yes" : "NO") |")
        }
    }
}
