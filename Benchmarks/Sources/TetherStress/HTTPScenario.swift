import Foundation
import NIOConcurrencyHelpers
import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `http` scenario: concurrent loops of `URLConnection.data(for:)` with an `HTTPResponseCache` against
/// ``HTTPStressServer`` in a peer process; every body is checked, and cache hits are the loads that never reached
/// the server (loads minus the server's request count).
enum HTTPScenario {
    /// The client's account.
    struct Totals {
        var loads = 0
        var errors = 0
        var firstErrors: [String] = []
        var byKind: [String: Int] = [:]
    }

    /// Loops of loads until `stop()`; returns when each loop ended (a load's own timeout is 30 s).
    static func load(
        port: Int,
        concurrency: Int,
        cache: HTTPResponseCache,
        histogram: LatencyHistogram,
        totals: NIOLockedValueBox<Totals>,
        stop: @escaping @Sendable () -> Bool
    ) async {
        let configuration = URLConnection.Configuration(responseCache: cache)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<concurrency {
                group.addTask {
                    var index = 0
                    while !stop() {
                        index += 1
                        let pick = Int.random(in: 0..<8)
                        let kind = pick < 4 ? "cached" : pick < 6 ? "validated" : "fresh"
                        let key =
                            kind == "cached"
                            ? Int.random(in: 0..<256)
                            : kind == "validated" ? Int.random(in: 0..<64) : worker * 1_000_000 + index
                        let path = "/\(kind)/\(key)"
                        let request = URLRequest(
                            url: URL(string: "http://127.0.0.1:\(port)\(path)")!,
                            cachePolicy: .useProtocolCachePolicy,
                            timeoutInterval: 30
                        )
                        let start = ProcessProbe.nanoseconds()
                        var failure: String?
                        do {
                            let (data, response) = try await URLConnection.data(
                                for: request,
                                configuration: configuration
                            )
                            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                            if status != 200 {
                                failure = "\(path): status \(status)"
                            } else if String(decoding: data, as: UTF8.self) != HTTPStressServer.body(for: path) {
                                failure = "\(path): wrong body (\(data.count) bytes)"
                            }
                        } catch {
                            failure = "\(path): \(error)"
                        }
                        histogram.record(ProcessProbe.nanoseconds() &- start, shard: worker)
                        totals.withLockedValue { totals in
                            totals.loads += 1
                            totals.byKind[kind, default: 0] += 1
                            if let failure {
                                totals.errors += 1
                                if totals.firstErrors.count < 5 { totals.firstErrors.append(failure) }
                            }
                        }
                    }
                }
            }
        }
    }

    static func run(_ options: StressOptions) async throws -> Bool {
        let concurrency = options.int("--concurrency", default: 64)
        let duration = options.double("--duration", default: 30)
        print("\n== HTTP: \(concurrency) concurrent URLConnection loads with HTTPResponseCache, \(duration) s")
        print(
            "   mix: 1/2 /cached/0…255 (max-age=2, ETag), 1/4 /validated/0…63 (no-cache, ETag), 1/4 /fresh (no-store)"
        )
        let peer = try StressPeer(arguments: ["serve-http"])
        let cache = HTTPResponseCache(memoryCapacity: 8 << 20)
        let histogram = LatencyHistogram()
        let totals = NIOLockedValueBox(Totals())
        let stopped = NIOLockedValueBox(false)
        let cpuStart = ProcessProbe.cpuSeconds()
        let peerCPUStart = ProcessProbe.cpuSeconds(pid: peer.pid)
        let start = ProcessProbe.now()
        let task = Task {
            await load(port: peer.port, concurrency: concurrency, cache: cache, histogram: histogram, totals: totals) {
                stopped.withLockedValue { $0 }
            }
        }
        try await Task.sleep(for: .seconds(duration))
        stopped.withLockedValue { $0 = true }
        let ended = await Deadline.run(seconds: 40) { await task.value }
        let wall = ProcessProbe.now() - start
        let cpuEnd = ProcessProbe.cpuSeconds()
        let peerCPU = ProcessProbe.cpuSeconds(pid: peer.pid) - peerCPUStart
        let stats = peer.stop()
        let result = totals.withLockedValue { $0 }
        let served = Int(stats["requests"] ?? "") ?? -1
        let full = ["full_cached", "full_validated", "full_fresh"].map { Int(stats[$0] ?? "") ?? 0 }.reduce(0, +)
        let notModified = Int(stats["not_modified"] ?? "") ?? 0
        print(
            "loads: \(result.loads) in \(String(format: "%.1f", wall)) s = \(String(format: "%.0f loads/s", Double(result.loads) / wall)); "
                + "by kind \(result.byKind.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))"
        )
        print(
            "cache: \(result.loads - served) served from the cache without a request, \(notModified) revalidated (304), "
                + "\(full) full responses from the network; the server saw \(served) requests"
        )
        print("latency per load: \(histogram.summary())")
        let clientCPU = (cpuEnd.user - cpuStart.user) + (cpuEnd.system - cpuStart.system)
        print(
            String(
                format: "CPU: client %.1f s, server %.1f s beside %.1f s wall; load average %@",
                clientCPU,
                peerCPU,
                wall,
                ProcessProbe.loadAverage()
            )
        )
        let passed = result.errors == 0 && ended && served >= 0
        print(
            "check: errors \(result.errors)\(ended ? "" : ", loads still running at the deadline") → \(passed ? "PASS" : "FAIL")"
        )
        for error in result.firstErrors { print("  error: \(error)") }
        return passed
    }
}
