import Foundation
import NIOCore
import NIOPosix
import TetherSockets

/// `--only side-by-side`: the speed table, with both ends in this process (no child peer). Each row runs the
/// raw engine and Tether for the same work against the same kind of in-process NIO server, interleaved round by
/// round. `--only side-by-side-more` runs the ping-pong, TLS and UDP rows of the other suites the same way;
/// `--rows 1,5` chooses rows by number; `--shared-loops` runs the server on the clients' event loops.
enum SideBySideSuite {
    struct Sizes {
        var bulkBytes: Int
        var lengthFrames: Int
        var stxFrames: Int
        var roundTrips: Int
        var datagrams: Int

        /// The defaults, or `--quick`'s, unless an option sets one.
        init(quick: Bool, option: (String) -> String?) {
            func value(_ name: String, _ full: Int, _ quickValue: Int) -> Int {
                option(name).flatMap { Int($0) } ?? (quick ? quickValue : full)
            }
            bulkBytes = value("--bulk-mib", 256, 64) << 20
            lengthFrames = value("--length-frames", 1_000_000, 100_000)
            // The issue measured the seed's pattern at about 10k frames/s: 100,000 frames, about 10 s a round.
            stxFrames = value("--stx-frames", 100_000, 20_000)
            roundTrips = value("--round-trips", 20_000, 5_000)
            datagrams = value("--datagrams", 100_000, 20_000)
        }
    }

    static let issueRows = Array(1...5)
    static let moreRows = Array(6...11)
    static let lengthPayload = 64

    /// Runs the rows `only` and `--rows` choose, `--rounds` rounds each (5 unless told).
    static func run(only: String, quick: Bool, option: (String) -> String?) async throws {
        let sizes = Sizes(quick: quick, option: option)
        let rounds = option("--rounds").flatMap { Int($0) } ?? 5
        let chosenText = option("--rows")
        var numbers =
            only == "side-by-side-more"
            ? moreRows
            : only == "side-by-side-runloop"
                ? runLoopRows
                : only == "side-by-side-udp-gate"
                    ? gateRows
                    : only == "side-by-side-floor"
                        ? floorRows
                        : only == "side-by-side-all"
                            ? issueRows + moreRows + runLoopRows + gateRows + floorRows : issueRows
        if let chosenText {
            numbers = chosenText.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        }
        print(
            "side by side: bulk \(sizes.bulkBytes >> 20) MiB, \(sizes.lengthFrames) length frames of "
                + "\(lengthPayload) B, \(sizes.stxFrames) STX frames, \(sizes.roundTrips) round trips, "
                + "\(sizes.datagrams) datagrams; clients on the singleton group, the server "
                + (CommandLine.arguments.contains("--shared-loops") ? "on it too" : "on its own event loop")
        )
        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?"
        print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, load average \(load)", terminator: "")
        // `--shared-loops` puts the server on the clients' singleton group: a client may then share its loop with
        // the server's side of the connection, or not, as `next()` picks.
        let sharedLoops = CommandLine.arguments.contains("--shared-loops")
        let ownGroup = sharedLoops ? nil : MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let serverGroup: any EventLoopGroup = ownGroup ?? MultiThreadedEventLoopGroup.singleton
        // One identity for both TLS rows: a second one at the same path would meet the first's cached context.
        let identity = numbers.contains(8) || numbers.contains(9) ? try TLSIdentity.generate() : nil
        var results: [SideBySideResult] = []
        for number in numbers {
            let (row, server) = try await make(number, sizes: sizes, group: serverGroup, identity: identity)
            results.append(try await SideBySide.run(row, rounds: rounds))
            try await server.stop()
        }
        try await ownGroup?.shutdownGracefully()
        print("\nSide by side: medians over \(rounds) rounds; ratios are paired medians of raw / Tether")
        print(SideBySideResult.header)
        for result in results { print(result.tableLine) }
    }

    /// Row `number` and the in-process server it runs against.
    static func make(
        _ number: Int,
        sizes: Sizes,
        group: any EventLoopGroup,
        identity: TLSIdentity?
    ) async throws -> (SideBySideRow, InProcessServer) {
        let bulk = sizes.bulkBytes
        switch number {
        case 1:
            let server = try await InProcessServer.tcp(group: group) { SinkHandler(total: bulk) }
            let port = server.port
            let row = SideBySideRow(
                number: 1,
                name: "delegate face (queue), bulk upload \(bulk >> 20) MiB in 64 KiB writes",
                unit: "B/s",
                amount: Double(bulk),
                target: "≥ 0.9×",
                rawName: "NIO handlers (write while writable, one flush per burst)",
                raw: { try await RawNIO.handlersUpload(port: port, total: bulk) },
                tether: { try await TetherClients.delegateUpload(port: port, total: bulk, delivery: .delegateQueue) }
            )
            return (row, server)
        case 2:
            let server = try await InProcessServer.tcp(group: group) { SourceHandler(total: bulk) }
            let port = server.port
            let check = { (count: Int) throws in
                if count != bulk { throw BenchmarkError(description: "received \(count) of \(bulk) bytes") }
            }
            let row = SideBySideRow(
                number: 2,
                name: "delegate face (queue), bulk download \(bulk >> 20) MiB, readData(withTimeout:) per callback",
                unit: "B/s",
                amount: Double(bulk),
                target: "≥ 0.9×",
                rawName: "NIO handler counting bytes",
                raw: { try check(try await RawNIO.handlersDownload(port: port)) },
                tether: { try check(try await TetherClients.delegateDownload(port: port, delivery: .delegateQueue)) }
            )
            return (row, server)
        case 3, 4:
            let count = sizes.lengthFrames
            let wire = LengthFramingBenchmarks.wire(count: count, payloadLength: lengthPayload)
            let server = try await InProcessServer.tcp(group: group) { FrameSourceHandler(wire: wire) }
            let port = server.port
            let frames = "\(count) frames, 2-byte length + \(lengthPayload) B"
            if number == 3 {
                let row = SideBySideRow(
                    number: 3,
                    name: "async frames(LengthFieldFrameCodec(.two)), \(frames)",
                    unit: "frames/s",
                    amount: Double(count),
                    target: "≥ 1.0×",
                    rawName: "NIOAsyncChannel over a hand-written ByteToMessageDecoder",
                    raw: { try await LengthFramingBenchmarks.asyncChannel(port: port, count: count) },
                    tether: { try await LengthFramingBenchmarks.tetherFrames(port: port, count: count) }
                )
                return (row, server)
            }
            let row = SideBySideRow(
                number: 4,
                name: "FrameDecoder(LengthFieldFrameCodec(.two)) in a pipeline, \(frames)",
                unit: "frames/s",
                amount: Double(count),
                target: "≥ 0.95×",
                rawName: "hand-written ByteToMessageDecoder in a pipeline",
                raw: { try await LengthFramingBenchmarks.pipeline(port: port, count: count, handWritten: true) },
                tether: { try await LengthFramingBenchmarks.pipeline(port: port, count: count, handWritten: false) }
            )
            return (row, server)
        case 5:
            let count = sizes.stxFrames
            let wire = FramingBenchmarks.wire(count: count)
            let server = try await InProcessServer.tcp(group: group) { FrameSourceHandler(wire: wire) }
            let port = server.port
            let row = SideBySideRow(
                number: 5,
                name: "the seed's pattern: STX header then body by tag, re-issued from the callback, \(count) frames",
                unit: "frames/s",
                amount: Double(count),
                target: "≥ 100k frames/s",
                rawName: "the hand-written STX ByteToMessageDecoder of --only framing (bitwise CRC) in a pipeline",
                raw: { try await FramingBenchmarks.pipeline(port: port, count: count, handWritten: true) },
                tether: { try await FramingBenchmarks.tetherDelegate(port: port, count: count) }
            )
            return (row, server)
        case 12...14:
            return try await makeRunLoop(number, sizes: sizes, group: group)
        case 15, 16:
            return try await makeGate(number, sizes: sizes, group: group)
        case 17...19:
            return try await makeFloor(number, sizes: sizes, group: group)
        default:
            return try await makeMore(number, sizes: sizes, group: group, identity: identity)
        }
    }
}
