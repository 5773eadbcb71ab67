import NIOCore
import NIOPosix
import TetherSockets

/// One measured case: a Tether face doing some work, and the engine doing the same work in the same run.
struct AllocationCase: Sendable {
    /// The name its budget is kept under, `<work>.<face>`.
    let name: String
    let tether: Workload
    /// The engine's variant (measured once per run for the cases that share it).
    let engine: EngineVariant
    /// Counted calls per round.
    let iterations: Int

    /// The engine's side of a case.
    struct EngineVariant: Sendable {
        let name: String
        let workload: Workload
        let iterations: Int
    }
}

extension AllocationCase {
    /// Round trips per call where a face drives them from its callbacks (as the engine's handlers do).
    static let batch = 100

    /// Every case, in the order of the table.
    static func all(peers: PeerServers, host: RunLoopHost) -> [AllocationCase] {
        let batch = Self.batch
        let connection = EngineVariant(
            name: "NIO handlers",
            workload: EngineWorkloads.connection(peers),
            iterations: 40
        )
        let pingPong = EngineVariant(
            name: "NIO handlers",
            workload: EngineWorkloads.pingPong(peers, batch: batch),
            iterations: 4
        )
        let datagram = EngineVariant(
            name: "NIO handlers",
            workload: EngineWorkloads.datagram(peers, batch: batch),
            iterations: 4
        )
        let loop = peers.group.next()
        let frames = EngineVariant(
            name: "NIO handlers, hand-written decoder",
            workload: EngineWorkloads.frames(peers, batch: batch),
            iterations: 4
        )
        let decoder = EngineVariant(
            name: "hand-written decoder",
            workload: DecoderWorkloads.handWritten(on: loop, batch: batch),
            iterations: 4
        )
        let http = EngineVariant(
            name: "AsyncHTTPClient",
            workload: HTTPWorkloads.asyncHTTPClient(peers),
            iterations: 100
        )
        let notes = EngineVariant(name: "NoteDAO in process", workload: NotesWorkloads.dao(), iterations: 100)
        return [
            AllocationCase(
                name: "tcp-connection.async",
                tether: AsyncFaceWorkloads.connection(peers),
                engine: connection,
                iterations: 40
            ),
            AllocationCase(
                name: "tcp-connection.gcd-queue",
                tether: DelegateWorkloads.connection(peers, delivery: .delegateQueue),
                engine: connection,
                iterations: 40
            ),
            AllocationCase(
                name: "tcp-connection.gcd-event-loop",
                tether: DelegateWorkloads.connection(peers, delivery: .eventLoop),
                engine: connection,
                iterations: 40
            ),
            AllocationCase(
                name: "tcp-connection.run-loop",
                tether: DelegateWorkloads.runLoopConnection(peers, host: host),
                engine: connection,
                iterations: 40
            ),
            AllocationCase(
                name: "tcp-ping-pong.async",
                tether: AsyncFaceWorkloads.pingPong(peers),
                engine: pingPong,
                iterations: 400
            ),
            AllocationCase(
                name: "tcp-ping-pong.gcd-queue",
                tether: DelegateWorkloads.pingPong(peers, delivery: .delegateQueue, batch: batch),
                engine: pingPong,
                iterations: 4
            ),
            AllocationCase(
                name: "tcp-ping-pong.gcd-event-loop",
                tether: DelegateWorkloads.pingPong(peers, delivery: .eventLoop, batch: batch),
                engine: pingPong,
                iterations: 4
            ),
            AllocationCase(
                name: "tcp-ping-pong.run-loop",
                tether: DelegateWorkloads.runLoopPingPong(peers, host: host, batch: batch),
                engine: pingPong,
                iterations: 4
            ),
            AllocationCase(
                name: "udp-datagram.async",
                tether: AsyncFaceWorkloads.datagram(peers),
                engine: datagram,
                iterations: 400
            ),
            AllocationCase(
                name: "udp-datagram.gcd-queue",
                tether: UDPWorkloads.gcd(peers, delivery: .delegateQueue, batch: batch),
                engine: datagram,
                iterations: 4
            ),
            AllocationCase(
                name: "udp-datagram.gcd-event-loop",
                tether: UDPWorkloads.gcd(peers, delivery: .eventLoop, batch: batch),
                engine: datagram,
                iterations: 4
            ),
            AllocationCase(
                name: "udp-datagram.run-loop",
                tether: UDPWorkloads.runLoop(peers, host: host, batch: batch),
                engine: datagram,
                iterations: 4
            ),
            AllocationCase(
                name: "frame.frames-sequence",
                tether: AsyncFaceWorkloads.frames(peers, batch: batch),
                engine: frames,
                iterations: 4
            ),
            AllocationCase(
                name: "frame.frame-decoder",
                tether: DecoderWorkloads.frameDecoder(on: loop, batch: batch),
                engine: decoder,
                iterations: 4
            ),
            AllocationCase(
                name: "http-get.data-for",
                tether: HTTPWorkloads.dataForRequest(peers),
                engine: http,
                iterations: 100
            ),
            AllocationCase(
                name: "http-get.delegate-queue",
                tether: HTTPWorkloads.delegateFace(peers),
                engine: http,
                iterations: 100
            ),
            AllocationCase(
                name: "notes-edit.service",
                tether: NotesWorkloads.service(),
                engine: notes,
                iterations: 100
            ),
        ]
    }
}
