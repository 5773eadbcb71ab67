import TetherSockets

/// Tether's UDP delegate faces: `batch` datagrams of 64 bytes sent and echoed, each sent from the last echo's callback.
enum UDPWorkloads {
    static func gcd(_ peers: PeerServers, delivery: GCDAsyncSocket.CallbackDelivery, batch: Int) -> Workload {
        Workload {
            let driver = try GCDUdpDriver(peerPort: peers.udpPort, delivery: delivery)
            return WorkloadSession(
                operationsPerCall: batch,
                operation: { try await driver.run(count: batch) },
                end: { driver.socket.close() }
            )
        }
    }

    static func runLoop(_ peers: PeerServers, host: RunLoopHost, batch: Int) -> Workload {
        Workload {
            let driver = RunLoopUdpDriver(host: host, peerPort: peers.udpPort)
            try await driver.bind()
            return WorkloadSession(
                operationsPerCall: batch,
                operation: { try await driver.run(count: batch) },
                end: { try await driver.close() }
            )
        }
    }
}
