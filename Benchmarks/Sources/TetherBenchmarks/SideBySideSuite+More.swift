import NIOCore
import NIOPosix
import TetherSockets

/// Rows 6–11: the ping-pong, TLS and UDP rows of the other suites, run side by side with both ends in this process.
/// The clients are those of `--only pingpong|tls|udp`; only the peer moved in.
extension SideBySideSuite {
    static func makeMore(
        _ number: Int,
        sizes: Sizes,
        group: any EventLoopGroup,
        identity: TLSIdentity?
    ) async throws -> (SideBySideRow, InProcessServer) {
        switch number {
        case 6, 7:
            let server = try await InProcessServer.tcp(group: group) { EchoHandler() }
            let port = server.port
            let trips = sizes.roundTrips
            let work = "ping-pong, \(trips) round trips of 64 B"
            let row =
                number == 6
                ? SideBySideRow(
                    number: 6,
                    name: "delegate face (queue), \(work)",
                    unit: "rt/s",
                    amount: Double(trips),
                    target: "as in --only pingpong (0.82×)",
                    rawName: "NIO handlers",
                    raw: { try await RawNIO.handlersPingPong(port: port, roundTrips: trips) },
                    tether: {
                        try await TetherClients.delegatePingPong(
                            port: port,
                            roundTrips: trips,
                            delivery: .delegateQueue
                        )
                    }
                )
                : SideBySideRow(
                    number: 7,
                    name: "async face, \(work)",
                    unit: "rt/s",
                    amount: Double(trips),
                    target: "as in --only pingpong (1.00×)",
                    rawName: "NIOAsyncChannel",
                    raw: { try await RawNIO.asyncPingPong(port: port, roundTrips: trips) },
                    tether: { try await TetherClients.asyncPingPong(port: port, roundTrips: trips) }
                )
            return (row, server)
        case 8, 9:
            guard let identity else { throw BenchmarkError(description: "no TLS identity") }
            let settings = try identity.clientSettings()
            let context = identity.clientContext
            let bulk = sizes.bulkBytes
            let server = try await InProcessServer.tcp(group: group, tls: try identity.serverContext()) {
                SinkHandler(total: bulk)
            }
            let port = server.port
            let work = "TLS bulk upload \(bulk >> 20) MiB in 64 KiB writes"
            let row =
                number == 8
                ? SideBySideRow(
                    number: 8,
                    name: "delegate face (queue), \(work)",
                    unit: "B/s",
                    amount: Double(bulk),
                    target: "as in --only tls (0.86× paired)",
                    rawName: "NIOSSL handlers",
                    raw: { try await TLSBenchmarks.rawUpload(port: port, total: bulk, context: context) },
                    tether: {
                        try await UploadDriver(total: bulk, tls: settings).run(port: port, delivery: .delegateQueue)
                    }
                )
                : SideBySideRow(
                    number: 9,
                    name: "async face, \(work)",
                    unit: "B/s",
                    amount: Double(bulk),
                    target: "as in --only tls (0.98× paired)",
                    rawName: "NIOSSL handlers",
                    raw: { try await TLSBenchmarks.rawUpload(port: port, total: bulk, context: context) },
                    tether: { try await TLSBenchmarks.asyncUpload(port: port, total: bulk, settings: settings) }
                )
            return (row, server)
        case 10, 11:
            let server = try await InProcessServer.udpEcho(group: group)
            let port = server.port
            let count = sizes.datagrams
            let work = "UDP, \(count) datagrams of 64 B through an echo, \(UDPBenchmarks.window) in flight"
            let row =
                number == 10
                ? SideBySideRow(
                    number: 10,
                    name: "delegate face (queue), \(work)",
                    unit: "dgram/s",
                    amount: Double(count),
                    target: "≥ 0.9×",
                    rawName: "NIO handlers",
                    raw: { try await UDPBenchmarks.handlers(port: port, count: count, size: 64) },
                    tether: {
                        try await UDPBenchmarks.stallGuarded {
                            try await UDPBenchmarks.tetherDelegate(port: port, count: count, size: 64)
                        }
                    }
                )
                : SideBySideRow(
                    number: 11,
                    name: "async face, \(work)",
                    unit: "dgram/s",
                    amount: Double(count),
                    target: "≥ 0.9×",
                    rawName: "NIOAsyncChannel",
                    raw: {
                        try await UDPBenchmarks.stallGuarded {
                            try await UDPBenchmarks.asyncChannel(port: port, count: count, size: 64)
                        }
                    },
                    tether: {
                        try await UDPBenchmarks.stallGuarded {
                            try await UDPBenchmarks.tetherAsync(port: port, count: count, size: 64)
                        }
                    }
                )
            return (row, server)
        default:
            throw BenchmarkError(description: "no side-by-side row \(number) (rows are 1–18)")
        }
    }
}
