import Dispatch
import Foundation
import NIOConcurrencyHelpers
import TetherSockets

/// The delegate-face clients of a run: ``GCDClientConnection``s on 16 serial delegate queues, connected in batches,
/// started together, and waited for (with deadlines) until each has ended.
final class GCDFaceClients: Sendable {
    let connections: [GCDClientConnection]
    private let ready = NIOLockedValueBox((ok: 0, failed: 0))
    private let ended = NIOLockedValueBox(0)

    init(count: Int, port: Int, tls: TLSSettings?, control: RunControl, framesPerLife: Int? = nil, firstID: UInt32 = 0)
    {
        let queues = (0..<16).map { DispatchQueue(label: "stress.gcd-client.\($0)") }
        connections = (0..<count).map { index in
            GCDClientConnection(
                id: firstID + UInt32(index),
                port: port,
                tls: tls,
                control: control,
                queue: queues[index % queues.count],
                framesPerLife: framesPerLife
            )
        }
    }

    /// Connects every client, `batch` at a time; returns how many are ready. Each batch waits at most 60 s.
    func connect(batch: Int) async -> Int {
        var start = 0
        while start < connections.count {
            let end = min(start + batch, connections.count)
            for connection in connections[start..<end] {
                connection.connect(
                    ready: { [ready] ok in
                        ready.withLockedValue { counts in
                            if ok { counts.ok += 1 } else { counts.failed += 1 }
                        }
                    },
                    end: { [ended] in ended.withLockedValue { $0 += 1 } }
                )
            }
            let target = end
            _ = await Self.wait(seconds: 60) { [ready] in ready.withLockedValue { $0.ok + $0.failed } >= target }
            start = end
        }
        return ready.withLockedValue { $0.ok }
    }

    func start() {
        for connection in connections { connection.start() }
    }

    /// Waits until every client ended (after the run stopped), at most `seconds`; then closes the rest and waits
    /// 10 s more. Returns whether all ended in the first wait.
    func waitForEnd(seconds: Double) async -> Bool {
        let total = connections.count
        if await Self.wait(seconds: seconds, until: { [ended] in ended.withLockedValue { $0 } >= total }) {
            return true
        }
        for connection in connections { connection.forceClose() }
        _ = await Self.wait(seconds: 10) { [ended] in ended.withLockedValue { $0 } >= total }
        return false
    }

    /// Polls `condition` every 10 ms for at most `seconds`.
    static func wait(seconds: Double, until condition: @Sendable () -> Bool) async -> Bool {
        let deadline = ProcessProbe.now() + seconds
        while !condition() {
            if ProcessProbe.now() > deadline { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }
}
