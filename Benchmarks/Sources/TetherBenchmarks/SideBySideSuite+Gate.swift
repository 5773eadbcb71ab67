import NIOCore
@_spi(Benchmarks) import TetherSockets

/// Rows 15–16 (`--only side-by-side-udp-gate`): what `UDPSendGate` is worth. Both variants are Tether, on the same
/// UDP echo work as rows 10–11: "raw" sends every datagram through NIO (the gate switched off), "Tether" as shipped
/// (a send goes straight to the kernel from the sending thread while nothing waits in NIO). A ratio above 1.0× is
/// the gate's gain.
extension SideBySideSuite {
    static let gateRows = [15, 16]

    static func makeGate(
        _ number: Int,
        sizes: Sizes,
        group: any EventLoopGroup
    ) async throws -> (SideBySideRow, InProcessServer) {
        let server = try await InProcessServer.udpEcho(group: group)
        let port = server.port
        let count = sizes.datagrams
        let work = "UDP, \(count) datagrams of 64 B through an echo, \(UDPBenchmarks.window) in flight"
        let delegate = {
            try await UDPBenchmarks.stallGuarded {
                try await UDPBenchmarks.tetherDelegate(port: port, count: count, size: 64)
            }
        }
        let async = {
            try await UDPBenchmarks.stallGuarded {
                try await UDPBenchmarks.tetherAsync(port: port, count: count, size: 64)
            }
        }
        let body = number == 15 ? delegate : async
        let row = SideBySideRow(
            number: number,
            name: "\(number == 15 ? "delegate face (queue)" : "async face"), \(work): the send gate's worth",
            unit: "dgram/s",
            amount: Double(count),
            target: "> 1.0× keeps the gate",
            rawName: "the same face with every send through NIO (UDPSendGate off)",
            raw: {
                BenchmarkSwitches.udpDirectSends = false
                defer { BenchmarkSwitches.udpDirectSends = true }
                try await body()
            },
            tether: { try await body() }
        )
        return (row, server)
    }
}
