import Foundation
import NIOCore
import NIOSSL
import Testing
import TetherTestSupport

@testable import TetherSockets

/// ``GCDAsyncSocketSimulationTests``' model and invariants over TLS: the socket calls `startTLS` at a step drawn from
/// the seed (often before its first read, else after some plaintext steps, or after the last), and the peer, a NIO
/// TLS server with the test certificates, switches at the same point of both streams. The reads issued before
/// `startTLS` take exactly the plaintext (as the original: reads and writes queued before `startTLS` complete, then
/// the handshake starts); every read issued after it completes after the one `socketDidSecure`.
///
/// `TETHER_SIM_SEEDS=N` runs N seeds per delivery, `TETHER_SIM_SEED=S` replays one (`scripts/simulate.sh --face
/// gcdtls`).
@Suite struct GCDAsyncSocketTLSSimulationTests {
    static let seeds = SeededGenerator.seeds(first: 0x5EED_7150, count: 5)

    @Test(arguments: [GCDAsyncSocket.CallbackDelivery.delegateQueue, .eventLoop])
    func randomSchedulesKeepTheContractOverTLS(delivery: GCDAsyncSocket.CallbackDelivery) async throws {
        let certificates = try await TLSTestCertificates.shared()
        let server = try NIOSSLContext(
            configuration: .makeServerConfiguration(
                certificateChain: [.certificate(try certificates.certificate("server"))],
                privateKey: .privateKey(try certificates.key("server"))
            )
        )
        let client = try certificates.client()
        try await GCDAsyncSocketSimulationTests.simulate(
            face: "GCDAsyncSocket TLS(\(delivery))",
            seeds: Self.seeds,
            tls: true
        ) { schedule in
            try await GCDAsyncSocketSimulationTests.run(schedule, delivery: delivery, tls: (client, server))
        }
    }
}
