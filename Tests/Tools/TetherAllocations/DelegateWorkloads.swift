import TetherSockets

/// Tether's delegate faces doing each case's work: `GCDAsyncSocket` (delegate queue or event-loop delivery) and the
/// RunLoop-era `AsyncSocket`, each driven by its callbacks.
enum DelegateWorkloads {
    /// A connection opened, 64 bytes each way, closed (both ends), by `GCDAsyncSocket`.
    static func connection(_ peers: PeerServers, delivery: GCDAsyncSocket.CallbackDelivery) -> Workload {
        Workload {
            WorkloadSession {
                let target = peers.tally.closed + 1
                try await GCDSocketDriver(delivery: delivery, closesAfterReply: true).connect(port: peers.echoPort)
                await peers.tally.waitUntilClosed(target)
            }
        }
    }

    /// `batch` round trips of 64 bytes on a warm `GCDAsyncSocket`, each started from the last one's `didRead`.
    static func pingPong(_ peers: PeerServers, delivery: GCDAsyncSocket.CallbackDelivery, batch: Int) -> Workload {
        Workload {
            let driver = GCDSocketDriver(delivery: delivery, closesAfterReply: false)
            try await driver.connect(port: peers.echoPort)
            return WorkloadSession(
                operationsPerCall: batch,
                operation: { try await driver.run(roundTrips: batch) },
                end: { driver.socket.disconnect() }
            )
        }
    }

    /// A connection opened, 64 bytes each way, closed (both ends), by `AsyncSocket` on `host`'s run loop.
    static func runLoopConnection(_ peers: PeerServers, host: RunLoopHost) -> Workload {
        Workload {
            WorkloadSession {
                let target = peers.tally.closed + 1
                try await RunLoopSocketDriver(host: host, closesAfterReply: true).connect(port: peers.echoPort)
                await peers.tally.waitUntilClosed(target)
            }
        }
    }

    /// `batch` round trips of 64 bytes on a warm `AsyncSocket`, each started from the last one's `didRead`.
    static func runLoopPingPong(_ peers: PeerServers, host: RunLoopHost, batch: Int) -> Workload {
        Workload {
            let driver = RunLoopSocketDriver(host: host, closesAfterReply: false)
            try await driver.connect(port: peers.echoPort)
            return WorkloadSession(
                operationsPerCall: batch,
                operation: { try await driver.run(roundTrips: batch) },
                end: { try await driver.disconnect() }
            )
        }
    }
}
