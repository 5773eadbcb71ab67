import NIOCore
import TetherSockets

/// Rows 12–14 (`--only side-by-side-runloop`): the RunLoop-era face beside the GCD-era face, both Tether, for the
/// same bulk and ping-pong work; here "raw" is `GCDAsyncSocket` on a delegate queue and "Tether" is `AsyncSocket`
/// on a run-loop thread, so the ratio is GCD / RunLoop.
extension SideBySideSuite {
    static let runLoopRows = Array(12...14)

    static func makeRunLoop(
        _ number: Int,
        sizes: Sizes,
        group: any EventLoopGroup
    ) async throws -> (SideBySideRow, InProcessServer) {
        let bulk = sizes.bulkBytes
        switch number {
        case 12:
            let server = try await InProcessServer.tcp(group: group) { SinkHandler(total: bulk) }
            let port = server.port
            let row = SideBySideRow(
                number: 12,
                name: "RunLoop face, bulk upload \(bulk >> 20) MiB in 64 KiB writes",
                unit: "B/s",
                amount: Double(bulk),
                target: "beside the GCD face",
                rawName: "GCDAsyncSocket on a delegate queue",
                raw: { try await TetherClients.delegateUpload(port: port, total: bulk, delivery: .delegateQueue) },
                tether: { try await RunLoopClients.upload(port: port, total: bulk) }
            )
            return (row, server)
        case 13:
            let server = try await InProcessServer.tcp(group: group) { SourceHandler(total: bulk) }
            let port = server.port
            let check = { (count: Int) throws in
                if count != bulk { throw BenchmarkError(description: "received \(count) of \(bulk) bytes") }
            }
            let row = SideBySideRow(
                number: 13,
                name: "RunLoop face, bulk download \(bulk >> 20) MiB, readData(withTimeout:) per callback",
                unit: "B/s",
                amount: Double(bulk),
                target: "beside the GCD face",
                rawName: "GCDAsyncSocket on a delegate queue",
                raw: { try check(try await TetherClients.delegateDownload(port: port, delivery: .delegateQueue)) },
                tether: { try check(try await RunLoopClients.download(port: port)) }
            )
            return (row, server)
        default:
            let server = try await InProcessServer.tcp(group: group) { EchoHandler() }
            let port = server.port
            let trips = sizes.roundTrips
            let row = SideBySideRow(
                number: 14,
                name: "RunLoop face, ping-pong, \(trips) round trips of 64 B",
                unit: "rt/s",
                amount: Double(trips),
                target: "beside the GCD face",
                rawName: "GCDAsyncSocket on a delegate queue",
                raw: {
                    try await TetherClients.delegatePingPong(port: port, roundTrips: trips, delivery: .delegateQueue)
                },
                tether: { try await RunLoopClients.pingPong(port: port, roundTrips: trips) }
            )
            return (row, server)
        }
    }
}
