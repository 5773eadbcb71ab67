import Foundation
import NIOCore
import NIOPosix
import TetherSockets

/// Rows 17–19 (`--only side-by-side-floor`): where the delegate face's bulk download stands against what any face
/// that calls back on a queue must pay, what the same face costs with its callbacks on the event loop, and where
/// `FrameDecoder` stands against a hand-written decoder that batches as it does.
///
/// Row 17's "raw" is the floor of a queue face: a NIO handler that hands each read to a serial `DispatchQueue` as a
/// `Data` over the read's own bytes (no copy), one `async` per read, reading up to 256 KiB at a time as Tether does.
/// Row 18 runs Tether's delegate face with `callbackDelivery = .eventLoop` against row 2's counting handler.
/// Row 19 is row 4 with a hand-written decoder that decodes every whole frame per call, as `FrameDecoder` does.
extension SideBySideSuite {
    static let floorRows = [17, 18, 19]

    static func makeFloor(
        _ number: Int,
        sizes: Sizes,
        group: any EventLoopGroup
    ) async throws -> (SideBySideRow, InProcessServer) {
        if number == 19 {
            let count = sizes.lengthFrames
            let wire = LengthFramingBenchmarks.wire(count: count, payloadLength: lengthPayload)
            let server = try await InProcessServer.tcp(group: group) { FrameSourceHandler(wire: wire) }
            let port = server.port
            let row = SideBySideRow(
                number: 19,
                name: "FrameDecoder(LengthFieldFrameCodec(.two)) in a pipeline, \(count) frames, vs a batching decoder",
                unit: "frames/s",
                amount: Double(count),
                target: "—",
                rawName: "hand-written ByteToMessageDecoder that decodes every whole frame per call",
                raw: {
                    try await LengthFramingBenchmarks.pipeline(
                        port: port,
                        count: count,
                        handWritten: true,
                        batching: true
                    )
                },
                tether: { try await LengthFramingBenchmarks.pipeline(port: port, count: count, handWritten: false) }
            )
            return (row, server)
        }
        let bulk = sizes.bulkBytes
        let server = try await InProcessServer.tcp(group: group) { SourceHandler(total: bulk) }
        let port = server.port
        let check = { (count: Int) throws in
            if count != bulk { throw BenchmarkError(description: "received \(count) of \(bulk) bytes") }
        }
        let row: SideBySideRow
        if number == 17 {
            row = SideBySideRow(
                number: 17,
                name: "delegate face (queue), bulk download \(bulk >> 20) MiB, against a queue face's floor",
                unit: "B/s",
                amount: Double(bulk),
                target: "—",
                rawName: "NIO handler, one DispatchQueue hop per read (Data without a copy, reads up to 256 KiB)",
                raw: { try check(try await QueueHopDownload.run(port: port)) },
                tether: { try check(try await TetherClients.delegateDownload(port: port, delivery: .delegateQueue)) }
            )
        } else {
            row = SideBySideRow(
                number: 18,
                name: "delegate face (event loop delivery), bulk download \(bulk >> 20) MiB",
                unit: "B/s",
                amount: Double(bulk),
                target: "—",
                rawName: "NIO handler counting bytes",
                raw: { try check(try await RawNIO.handlersDownload(port: port)) },
                tether: { try check(try await TetherClients.delegateDownload(port: port, delivery: .eventLoop)) }
            )
        }
        return (row, server)
    }
}
