import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import TetherSockets

// Usage: swift run -c release TetherBenchmarks [--quick] [--rounds N]
//        [--only bulk|pingpong|framing|tls|tls-bulk|tls-handshakes|udp|http|memory
//               |store|store-sqlite|store-scaling|store-memory
//               |side-by-side|side-by-side-more|side-by-side-runloop|side-by-side-udp-gate|side-by-side-floor|side-by-side-all [--rows 1,5] [--shared-loops]
//                [--bulk-mib N] [--length-frames N] [--stx-frames N] [--round-trips N] [--datagrams N]]
// Every variant talks to the same raw-NIO peer in a child process; variants run interleaved, round by round, and
// the best round of each is reported with its ratio to the raw engine.

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

raiseDescriptorLimit()

if let mode = option("--peer").flatMap(PeerMode.init(rawValue:)) {
    var context: NIOSSLContext?
    if let cert = option("--cert"), let key = option("--key") {
        context = try TLSIdentity(certificatePath: cert, keyPath: key).serverContext()
    }
    try PeerServer.run(mode: mode, bytes: Int(option("--bytes") ?? "0") ?? 0, tls: context)
}

if let variant = option("--profile-http") {
    try await HTTPProfile.run(variant: variant, count: Int(option("--count") ?? "") ?? 20_000)
    exit(0)
}
let quick = arguments.contains("--quick")
if let only = option("--only"), only.hasPrefix("side-by-side") {
    // Both ends in this process, 5 rounds unless told; see SideBySideSuite.
    try await SideBySideSuite.run(only: only, quick: quick, option: option)
    exit(0)
}
let rounds = Int(option("--rounds") ?? "") ?? (quick ? 1 : 3)
let only = option("--only")
let bulkBytes = quick ? 128 << 20 : 1 << 30
let roundTrips = quick ? 10_000 : 100_000
let idleConnections = quick ? 1_000 : 10_000

print("Tether benchmarks: \(rounds) round(s), bulk \(bulkBytes >> 20) MiB, ping-pong \(roundTrips) round trips")
print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores")

struct Variant {
    var name: String
    var run: () async throws -> Void
}

func runSuite(
    _ title: String,
    unit: String,
    amount: Double,
    variants: [Variant],
    baselines: [String: String]
) async throws {
    print("\n## \(title)")
    var best: [String: Double] = [:]
    var peaks: [String: Int] = [:]
    var perRound: [String: [Double]] = [:]
    var cpuPerRound: [String: [Double]] = [:]
    // TETHER_BENCH_VARIANT=<name prefix> runs the variants whose names start so (for profiling them);
    // TETHER_BENCH_VARIANT==<name> runs the one variant of that exact name; several choices are separated by "|".
    let choices = ProcessInfo.processInfo.environment["TETHER_BENCH_VARIANT"]?.split(separator: "|")
    let variants = variants.filter { variant in
        guard let choices else { return true }
        return choices.contains { chosen in
            chosen.hasPrefix("=") ? variant.name == chosen.dropFirst() : variant.name.hasPrefix(chosen)
        }
    }
    for round in 1...rounds {
        for variant in variants {
            let before = residentBytes()
            let start = now()
            let cpuStart = processCPUSeconds()
            let (_, peak) = try await withPeakMemory { try await variant.run() }
            let seconds = now() - start
            cpuPerRound[variant.name, default: []].append(processCPUSeconds() - cpuStart)
            best[variant.name] = min(best[variant.name] ?? .infinity, seconds)
            perRound[variant.name, default: []].append(seconds)
            peaks[variant.name] = max(peaks[variant.name] ?? 0, peak - before)
            print("  round \(round) \(variant.name): \(String(format: "%.3f", seconds)) s")
        }
    }
    // "paired" is the median over rounds of the ratio within one round (baseline time / variant time, both
    // measured back to back): steadier than the ratio of best times when the machine's speed drifts.
    // "CPU/op" is this process's CPU time (every thread, the peer process not counted) per unit of `amount`, the
    // median over rounds: on a machine whose speed drifts it moves less than wall-clock time.
    print("| variant | rate | vs | ratio | paired (median) | peak RSS growth | CPU/op (median) |")
    print("|---|---|---|---|---|---|---|")
    for variant in variants {
        guard let seconds = best[variant.name] else { continue }
        let rate = amount / seconds
        var ratioText = "—"
        var pairedText = "—"
        var baselineName = "—"
        if let baseline = baselines[variant.name], let baseSeconds = best[baseline] {
            baselineName = baseline
            ratioText = String(format: "%.2f×", baseSeconds / best[variant.name]!)
            let pairs = zip(perRound[baseline] ?? [], perRound[variant.name] ?? []).map { $0 / $1 }.sorted()
            if !pairs.isEmpty {
                let middle = pairs.count / 2
                let median = pairs.count % 2 == 1 ? pairs[middle] : (pairs[middle - 1] + pairs[middle]) / 2
                pairedText = String(format: "%.2f×", median)
            }
        }
        let cpu = (cpuPerRound[variant.name] ?? []).sorted()
        let cpuText = cpu.isEmpty ? "—" : cpuPerOp(cpu[cpu.count / 2] / amount)
        print(
            "| \(variant.name) | \(format(rate, unit)) | \(baselineName) | \(ratioText) | \(pairedText) | \(mib(peaks[variant.name] ?? 0)) | \(cpuText) |"
        )
    }
}

/// CPU seconds per operation, in the unit that suits it.
func cpuPerOp(_ seconds: Double) -> String {
    if seconds >= 1e-3 { return String(format: "%.2f ms", seconds * 1e3) }
    if seconds >= 1e-6 { return String(format: "%.1f µs", seconds * 1e6) }
    return String(format: "%.2f ns", seconds * 1e9)
}

let tetherBaselines = [
    "Tether async face": "NIOAsyncChannel",
    "Tether delegate face (queue)": "NIO handlers",
    "Tether delegate face (event loop)": "NIO handlers",
]

if only == nil || only == "bulk" {
    let discard = try PeerProcess(mode: .sink, bytes: bulkBytes)
    try await runSuite(
        "Bulk upload: \(bulkBytes >> 20) MiB in 64 KiB writes, client → peer",
        unit: "B/s",
        amount: Double(bulkBytes),
        variants: [
            Variant(name: "NIO handlers") { try await RawNIO.handlersUpload(port: discard.port, total: bulkBytes) },
            Variant(name: "NIOAsyncChannel") { try await RawNIO.asyncUpload(port: discard.port, total: bulkBytes) },
            Variant(name: "Tether async face") {
                try await TetherClients.asyncUpload(port: discard.port, total: bulkBytes)
            },
            Variant(name: "Tether delegate face (queue)") {
                try await TetherClients.delegateUpload(port: discard.port, total: bulkBytes, delivery: .delegateQueue)
            },
            Variant(name: "Tether delegate face (event loop)") {
                try await TetherClients.delegateUpload(port: discard.port, total: bulkBytes, delivery: .eventLoop)
            },
        ],
        baselines: tetherBaselines
    )
    discard.stop()

    let source = try PeerProcess(mode: .source, bytes: bulkBytes)
    func check(_ count: Int) throws {
        if count != bulkBytes { throw BenchmarkError(description: "received \(count) of \(bulkBytes) bytes") }
    }
    try await runSuite(
        "Bulk download: \(bulkBytes >> 20) MiB, peer → client",
        unit: "B/s",
        amount: Double(bulkBytes),
        variants: [
            Variant(name: "NIO handlers") { try check(try await RawNIO.handlersDownload(port: source.port)) },
            Variant(name: "NIOAsyncChannel") { try check(try await RawNIO.asyncDownload(port: source.port)) },
            Variant(name: "Tether async face") { try check(try await TetherClients.asyncDownload(port: source.port)) },
            Variant(name: "Tether delegate face (queue)") {
                try check(try await TetherClients.delegateDownload(port: source.port, delivery: .delegateQueue))
            },
            Variant(name: "Tether delegate face (event loop)") {
                try check(try await TetherClients.delegateDownload(port: source.port, delivery: .eventLoop))
            },
        ],
        baselines: tetherBaselines
    )
    source.stop()
}

if only == nil || only == "pingpong" {
    let echo = try PeerProcess(mode: .echo)
    try await runSuite(
        "Ping-pong: \(roundTrips) round trips of 64 bytes",
        unit: "rt/s",
        amount: Double(roundTrips),
        variants: [
            Variant(name: "NIO handlers") {
                try await RawNIO.handlersPingPong(port: echo.port, roundTrips: roundTrips)
            },
            Variant(name: "NIOAsyncChannel") {
                try await RawNIO.asyncPingPong(port: echo.port, roundTrips: roundTrips)
            },
            Variant(name: "Tether async face") {
                try await TetherClients.asyncPingPong(port: echo.port, roundTrips: roundTrips)
            },
            Variant(name: "Tether delegate face (queue)") {
                try await TetherClients.delegatePingPong(
                    port: echo.port,
                    roundTrips: roundTrips,
                    delivery: .delegateQueue
                )
            },
            Variant(name: "Tether delegate face (event loop)") {
                try await TetherClients.delegatePingPong(port: echo.port, roundTrips: roundTrips, delivery: .eventLoop)
            },
        ],
        baselines: tetherBaselines
    )
    echo.stop()
}

if only == nil || only == "framing" {
    let frameCount = quick ? 100_000 : 1_000_000
    let frames = try PeerProcess(mode: .frames, bytes: frameCount)
    try await runSuite(
        "Framing: \(frameCount) pipelined STX frames with 32-byte payloads",
        unit: "frames/s",
        amount: Double(frameCount),
        variants: [
            Variant(name: "(a) hand-written ByteToMessageDecoder") {
                try await FramingBenchmarks.pipeline(port: frames.port, count: frameCount, handWritten: true)
            },
            Variant(name: "(b) FrameDecoder(STXFrameCodec())") {
                try await FramingBenchmarks.pipeline(port: frames.port, count: frameCount, handWritten: false)
            },
            Variant(name: "(c) NIOAsyncChannel over (a)") {
                try await FramingBenchmarks.asyncChannel(port: frames.port, count: frameCount)
            },
            Variant(name: "(d) Tether frames(STXFrameCodec())") {
                try await FramingBenchmarks.tetherFrames(port: frames.port, count: frameCount)
            },
            Variant(name: "(e) Tether delegate face, tags 10/11") {
                try await FramingBenchmarks.tetherDelegate(port: frames.port, count: frameCount)
            },
        ],
        baselines: [
            "(b) FrameDecoder(STXFrameCodec())": "(a) hand-written ByteToMessageDecoder",
            "(d) Tether frames(STXFrameCodec())": "(c) NIOAsyncChannel over (a)",
            "(e) Tether delegate face, tags 10/11": "(a) hand-written ByteToMessageDecoder",
        ]
    )
    frames.stop()
}

if only == nil || only?.hasPrefix("tls") == true {
    let identity = try TLSIdentity.generate()
    let client = try identity.clientSettings()
    let tlsBaselines = [
        "NIOSSL handlers, refilled from a queue": "NIOSSL handlers",
        "Tether async face": "NIOSSL handlers",
        "Tether delegate face (queue)": "NIOSSL handlers",
        "Tether delegate face (event loop)": "NIOSSL handlers",
    ]
    let sink = try PeerProcess(mode: .tlsSink, bytes: bulkBytes, tls: identity)
    if only != "tls-handshakes" {
        try await runSuite(
            "TLS bulk upload: \(bulkBytes >> 20) MiB in 64 KiB writes, client → NIOSSL peer (TLS 1.3, P-256)",
            unit: "B/s",
            amount: Double(bulkBytes),
            variants: [
                Variant(name: "NIOSSL handlers") {
                    try await TLSBenchmarks.rawUpload(
                        port: sink.port,
                        total: bulkBytes,
                        context: identity.clientContext
                    )
                },
                // Diagnostic: the least that queue delivery costs. The same handlers, but each completed write
                // hops to a serial DispatchQueue, which copies the next `Data` chunk into a ByteBuffer and hands it
                // back to the event loop: the third thread that a delegate queue adds, without Tether.
                Variant(name: "NIOSSL handlers, refilled from a queue") {
                    try await TLSBenchmarks.rawUpload(
                        port: sink.port,
                        total: bulkBytes,
                        context: identity.clientContext,
                        refilledFromQueue: true
                    )
                },
                Variant(name: "Tether async face") {
                    try await TLSBenchmarks.asyncUpload(port: sink.port, total: bulkBytes, settings: client)
                },
                Variant(name: "Tether delegate face (queue)") {
                    try await UploadDriver(total: bulkBytes, tls: client).run(port: sink.port, delivery: .delegateQueue)
                },
                Variant(name: "Tether delegate face (event loop)") {
                    try await UploadDriver(total: bulkBytes, tls: client).run(port: sink.port, delivery: .eventLoop)
                },
            ],
            baselines: tlsBaselines
        )
    }
    sink.stop()

    let handshakes = Int(ProcessInfo.processInfo.environment["TETHER_BENCH_HANDSHAKES"] ?? "") ?? (quick ? 300 : 2_000)
    let acceptor = try PeerProcess(mode: .tlsHandshake, tls: identity)
    if only != "tls-bulk" {
        try await runSuite(
            "TLS handshakes: \(handshakes) sequential connections (connect, handshake, close)",
            unit: "hs/s",
            amount: Double(handshakes),
            variants: [
                Variant(name: "NIOSSL handlers") {
                    for _ in 0..<handshakes {
                        try await TLSBenchmarks.rawHandshake(port: acceptor.port, context: identity.clientContext)
                    }
                },
                Variant(name: "Tether async face") {
                    for _ in 0..<handshakes {
                        try await TLSBenchmarks.asyncHandshake(port: acceptor.port, settings: client)
                    }
                },
                Variant(name: "Tether delegate face (queue)") {
                    for _ in 0..<handshakes {
                        try await HandshakeDriver(tls: client).run(port: acceptor.port, delivery: .delegateQueue)
                    }
                },
                Variant(name: "Tether delegate face (event loop)") {
                    for _ in 0..<handshakes {
                        try await HandshakeDriver(tls: client).run(port: acceptor.port, delivery: .eventLoop)
                    }
                },
            ],
            baselines: tlsBaselines
        )
    }
    acceptor.stop()
}

if only == nil || only == "udp" {
    let echo = try PeerProcess(mode: .udpEcho)
    let echoPort = echo.port
    let count = quick ? 20_000 : 200_000
    for size in [64, 1_400] {
        try await runSuite(
            "UDP: \(count) datagrams of \(size) bytes through an echo peer, \(UDPBenchmarks.window) in flight",
            unit: "dgram/s",
            amount: Double(count),
            variants: [
                Variant(name: "NIO handlers") {
                    try await UDPBenchmarks.handlers(port: echoPort, count: count, size: size)
                },
                Variant(name: "NIOAsyncChannel") {
                    try await UDPBenchmarks.stallGuarded {
                        try await UDPBenchmarks.asyncChannel(port: echoPort, count: count, size: size)
                    }
                },
                Variant(name: "Tether async face") {
                    try await UDPBenchmarks.stallGuarded {
                        try await UDPBenchmarks.tetherAsync(port: echoPort, count: count, size: size)
                    }
                },
                Variant(name: "Tether delegate face (queue)") {
                    try await UDPBenchmarks.stallGuarded {
                        try await UDPBenchmarks.tetherDelegate(port: echoPort, count: count, size: size)
                    }
                },
                Variant(name: "Tether delegate face (event loop)") {
                    try await UDPBenchmarks.stallGuarded {
                        try await UDPBenchmarks.tetherDelegate(
                            port: echoPort,
                            count: count,
                            size: size,
                            delivery: .eventLoop
                        )
                    }
                },
            ],
            baselines: tetherBaselines
        )
    }
    echo.stop()
}

if only == nil || only == "http" {
    try await HTTPBenchmarks.run(quick: quick)
}

if only == nil || only?.hasPrefix("store") == true {
    if let kind = option("--store-child") {
        let records = Int(option("--records") ?? "") ?? 100_000
        try await StoreBenchmarks.memoryChild(
            kind: kind,
            phase: option("--phase") ?? "create",
            directory: option("--dir") ?? ".",
            records: records
        )
        exit(0)
    }
    try await StoreBenchmarks.run(part: only, rounds: rounds, quick: quick)
}

if only == nil || only == "memory" {
    try await IdleMemory.run(connections: idleConnections)
}

func raiseDescriptorLimit() {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}
