import Foundation
import NIOCore
import NIOPosix
import TetherSockets

/// Rows 17–18 (`--only side-by-side-floor`): where the delegate face's bulk download stands against what any face
/// that calls back on a queue must pay, and what the same face costs with its callbacks on the event loop.
///
/// Row 17's "raw" is the floor of a queue face: a NIO handler that hands each read to a serial `DispatchQueue` as a
/// `Data` over the read's own bytes (no copy), one `async` per read, reading up to 256 KiB at a time as Tether does.
/// Row 18 runs Tether's delegate face with `callbackDelivery = .eventLoop` against row 2's counting handler.
extension SideBySideSuite {
    static let floorRows = [17, 18]

    static func makeFloor(
        _ number: Int,
        sizes: Sizes,
        group: any EventLoopGroup
    ) async throws -> (SideBySideRow, InProcessServer) {
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
