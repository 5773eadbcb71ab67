import Foundation
import NIOCore
import TetherConcurrency
import TetherTestSupport

@testable import TetherSockets

/// What a ``UDPRace`` did: the sends issued, by thread in order; how many lives the socket had started before and
/// after; the inodes of the lives it saw.
struct UDPRaceRun {
    var issued: [[UDPRace.Send]]
    var livesBefore: UInt64
    var livesAfter: UInt64
    var inodes: Set<String>
    /// The sends sequenced after the end on its own thread (`close`, `closeAfterSending`): each starts a new life
    /// nothing else closes before the runner's final `close()`, and is owed exactly one result.
    var afterEnd: [UDPRace.Send]
    /// Whether the socket is gone (a release's check, once its callbacks ran).
    var released: @Sendable () -> Bool
}

extension UDPSimulationTests {
    /// Runs `race` on the socket in `holder` (which it empties for a release) from real threads at once: each thread
    /// sends its share through a weak reference (a send after a release is never issued); peer A's datagrams go
    /// first, racing the sends and their callbacks; thread 0 ends the socket at its drawn point.
    static func race(
        _ race: UDPRace,
        holder: LockedBox<GCDAsyncUdpSocket?>,
        addresses: [UDPSchedule.Target: Data],
        peer: UDPSocket,
        target: SocketAddress?
    ) async throws -> UDPRaceRun {
        let weak = WeakUDPSocket(holder.withLock { $0 })
        let livesBefore = weak.socket?.state.withLock { $0.lives } ?? 0
        if race.receiving { _ = try? weak.socket?.beginReceiving() }
        let issued = LockedBox<[[UDPRace.Send]]>(race.threads.map { _ in [] })
        let inodes = LockedBox<Set<String>>([])
        let livesAtEnd = LockedBox<UInt64?>(nil)
        let peerDone = DispatchSemaphore(value: 0)
        let end: @Sendable () -> Void = {
            peerDone.wait()
            switch race.end {
            case .close: holder.withLock { $0 }?.close()
            case .closeAfterSending: holder.withLock { $0 }?.closeAfterSending()
            case .release:
                let socket = holder.withLock { socket in
                    defer { socket = nil }
                    return socket
                }
                let lives = socket?.state.withLock { $0.lives }
                livesAtEnd.withLock { $0 = lives }
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for (offset, size) in race.peerDatagrams.enumerated() {
                    guard let target else { break }
                    var buffer = ByteBuffer(bytes: UDPSchedule.payload(tag: race.firstSequence + offset, size: size))
                    buffer.moveReaderIndex(to: 0)
                    try? await peer.send(buffer, to: target)
                }
                peerDone.signal()
            }
            for (index, sends) in race.threads.enumerated() {
                group.addTask {
                    try await onThread {
                        for (position, send) in sends.enumerated() {
                            if index == 0 && position == race.endAt { end() }
                            guard let socket = weak.socket else { break }
                            let data = UDPSchedule.payload(tag: send.tag, size: send.size)
                            issued.withLock { $0[index].append(send) }
                            socket.send(data, toAddress: addresses[send.to]!, withTimeout: send.timeout, tag: send.tag)
                            if let inode = Self.inode(of: socket) { inodes.withLock { _ = $0.insert(inode) } }
                        }
                        if index == 0 && race.endAt == sends.count { end() }
                    }
                }
            }
            try await group.waitForAll()
        }
        let afterEnd = race.end == .release ? [] : Array(issued.withLock { $0[0] }.dropFirst(race.endAt))
        return UDPRaceRun(
            issued: issued.withLock { $0 },
            livesBefore: livesBefore,
            livesAfter: livesAtEnd.withLock { $0 } ?? weak.socket?.state.withLock { $0.lives } ?? livesBefore,
            inodes: inodes.withLock { $0 },
            afterEnd: afterEnd,
            released: { weak.socket == nil }
        )
    }

    /// The inode of the socket's current IPv4 descriptor, read while its send gate holds it open (nil when closed).
    static func inode(of socket: GCDAsyncUdpSocket) -> String? {
        guard let life = socket.state.withLock({ $0.sockets?.runtime }) else { return nil }
        return life.withDescriptor(.inet) { fd in
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")
        } ?? nil
    }

    /// The race's invariants, from the delegate's events: no send result twice; a send reported NOT sent is a
    /// defect (loopback); each thread's results in its order; exactly one result for each send owed one
    /// (`closeAfterSending`: every send; `close`: those after it on its thread; a release: none).
    static func check(_ race: UDPRace, _ run: UDPRaceRun, events: [UdpEvent]) -> [String] {
        var problems: [String] = []
        var results: [Int: Int] = [:]
        var lastByThread: [Int: Int] = [:]
        for event in events {
            guard case .sent(let tag) = event, tag > UDPRace.firstTag else {
                if case .notSent(let tag, let code, _) = event, tag > UDPRace.firstTag {
                    problems.append("race send \(tag) not sent (code \(code.map(String.init) ?? "nil"))")
                }
                continue
            }
            results[tag, default: 0] += 1
            guard let thread = race.thread(of: tag) else { continue }
            // Also across `closeAfterSending`: a send that reaches the closing life after its end goes to the next
            // life ahead of the sends its thread issued after it.
            if let last = lastByThread[thread], last > tag {
                problems.append("thread \(thread): result of \(tag) after \(last)")
            }
            lastByThread[thread] = tag
        }
        let all = run.issued.flatMap { $0 }
        var owed: [UDPRace.Send] = []
        switch race.end {
        case .closeAfterSending: owed = all
        case .close: owed = run.afterEnd
        case .release: break
        }
        for send in owed where results[send.tag] == nil {
            problems.append("race send \(send.tag) (owed one result) got none")
        }
        for (tag, count) in results where count > 1 { problems.append("race send \(tag): \(count) results") }
        let issuedTags = Set(all.map(\.tag))
        for tag in results.keys where !issuedTags.contains(tag) {
            problems.append("race send \(tag) was never issued but got a result")
        }
        return problems
    }
}
