import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `--profile-http raw|data|delegate [--count N]`: one variant of the small-GET benchmark in a loop, nothing else, so
/// that a profiler (`perf record -e cpu-clock -g`, callgrind) sees only it. Prints the rate and the CPU per request.
enum HTTPProfile {
    static func run(variant: String, count: Int) async throws {
        let peer = try PeerProcess(mode: .http, bytes: 1 << 20)
        defer { peer.stop() }
        let small = URL(string: "http://127.0.0.1:\(peer.port)/small")!
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(75)))
        )
        let queue = CountingQueue()
        queue.maxConcurrentOperationCount = 1
        let one: () async throws -> Int
        switch variant {
        case "raw": one = { try await HTTPBenchmarks.rawGet(client, small) }
        case "data": one = { try await URLConnection.data(for: URLRequest(url: small)).0.count }
        case "delegate": one = { try await HTTPBenchmarks.delegateLoad(small, queue: queue, sink: .collect) }
        default: throw BenchmarkError(description: "--profile-http takes raw, data or delegate")
        }
        for _ in 0..<100 { _ = try await one() }
        let operationsBefore = queue.added
        let cpuStart = rusageCPUSeconds()
        let start = DispatchTime.now()
        for _ in 0..<count { _ = try await one() }
        let wall = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        let cpu = rusageCPUSeconds() - cpuStart
        print(
            "\(variant): \(count) GETs in \(String(format: "%.2f", wall)) s, "
                + "\(String(format: "%.0f", Double(count) / wall)) req/s, "
                + "CPU \(String(format: "%.1f", cpu / Double(count) * 1e6)) µs per request, "
                + "\(String(format: "%.2f", Double(queue.added - operationsBefore) / Double(count))) "
                + "delegate-queue operations per request"
        )
        try await client.shutdown()
    }
}

/// An `OperationQueue` that counts what is added to it: the delegate face's hops to its queue. (Foundation's
/// `addOperation(_ block:)` adds a `BlockOperation` through `addOperation(_:)`, so counting there counts both.)
final class CountingQueue: OperationQueue, @unchecked Sendable {
    // Sendable: the count is only read and changed under its lock.
    private let count = NIOLockedValueBox(0)

    var added: Int { count.withLockedValue { $0 } }

    override func addOperation(_ operation: Operation) {
        count.withLockedValue { $0 += 1 }
        super.addOperation(operation)
    }
}
