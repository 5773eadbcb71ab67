import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Testing

@testable import TetherSockets

@Suite(.timeLimit(.minutes(1)))
struct UDPSocketTests {
    static let families: [(host: String, largest: Int)] = [("127.0.0.1", 65_507), ("::1", 65_527)]

    @Test("datagrams of 0, 1, 9,216 and the largest size make the round trip", arguments: families)
    func datagramsOfEverySizeMakeTheRoundTrip(host: String, largest: Int) async throws {
        let echo = try await UDPEchoPeer.start(host: host)
        let client = try await UDPCollectingPeer(host: host)
        let sizes = [0, 1, 9_216, 65_507, largest]
        for (index, size) in sizes.enumerated() {
            try await client.socket.send(
                ByteBuffer(bytes: udpPattern(size, seed: UInt8(index))),
                toHost: host,
                port: Int(echo.port)
            )
        }
        let datagrams = try await client.wait(for: sizes.count)
        #expect(client.payloads == sizes.enumerated().map { udpPattern($0.element, seed: UInt8($0.offset)) })
        #expect(datagrams.allSatisfy { $0.remoteAddress.port == Int(echo.port) })
        await client.stop()
        await echo.stop()
    }

    /// Linux gives a socket that asks for any port with `SO_REUSEADDR` on a port that another such socket holds
    /// (600 plain sockets with it share 5–10 ports here). Both faces make and bind their descriptors with the two
    /// functions used here, which bind any port with it off; plain descriptors keep this test light.
    @Test("descriptors bound to any port get ports of their own")
    func anyPortIsAPortOfItsOwn() throws {
        var descriptors: [Int32] = []
        defer { for fd in descriptors { _ = UDPSystem.close(fd) } }
        var ports: [Int] = []
        let any = try SocketAddress(ipAddress: "127.0.0.1", port: 0)
        for _ in 0..<1_000 {
            let fd = try GCDAsyncUdpSocket.makeSocket(AF_INET, sendBuffer: 0)
            descriptors.append(fd)
            try GCDAsyncUdpSocket.bindDescriptor(fd, to: any)
            ports.append(try #require(SocketAddress(localAddressOf: fd).port))
        }
        #expect(Set(ports).count == ports.count, "ports bound twice: \(ports.count - Set(ports).count)")
    }

    @Test("a bind to any port of an address that is not local fails with its errno; SO_REUSEADDR is on again")
    func aFailedAnyPortBindRestoresReuse() throws {
        let fd = try GCDAsyncUdpSocket.makeSocket(AF_INET, sendBuffer: 0)
        defer { _ = UDPSystem.close(fd) }
        // TEST-NET-1 (RFC 5737): never an address of this machine.
        let foreign = try SocketAddress(ipAddress: "192.0.2.1", port: 0)
        do {
            try GCDAsyncUdpSocket.bindDescriptor(fd, to: foreign)
            Issue.record("the bind succeeded")
        } catch let error as GCDAsyncUdpSocketError {
            #expect(error.posixErrorCode == .EADDRNOTAVAIL)
        }
        var reuse: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        #expect(getsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, &length) == 0)
        #expect(reuse == 1)
    }

    @Test("an over-limit datagram throws EMSGSIZE for that send only", arguments: families)
    func anOverLimitDatagramThrows(host: String, largest: Int) async throws {
        let peer = try await UDPCollectingPeer(host: host)
        let socket = try await UDPSocket.bind(host: host, port: 0)
        let target = try SocketAddress(ipAddress: host, port: peer.port)
        do {
            try await socket.send(ByteBuffer(bytes: udpPattern(largest + 1)), to: target)
            Issue.record("an over-limit datagram was sent")
        } catch let error as GCDAsyncSocketError {
            #expect(error.domain == .posix)
            #expect(error.posixErrorCode == .EMSGSIZE)
        }
        try await socket.send(ByteBuffer(string: "still open"), to: target)
        try await peer.wait(for: 1)
        #expect(peer.payloads == [Data("still open".utf8)])
        try await socket.close()
        await peer.stop()
    }

    @Test("a refused send (EACCES: broadcast without SO_BROADCAST) throws and the socket stays open")
    func broadcastNeedsTheOption() async throws {
        let receiver = try await UDPCollectingPeer(host: "0.0.0.0")
        let socket = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let broadcast = try SocketAddress(ipAddress: "127.255.255.255", port: receiver.port)
        do {
            try await socket.send(ByteBuffer(string: "denied"), to: broadcast)
            Issue.record("broadcast without SO_BROADCAST was sent")
        } catch let error as GCDAsyncSocketError {
            #expect(error.posixErrorCode == .EACCES)
        }
        try await socket.setBroadcastEnabled(true)
        try await socket.send(ByteBuffer(string: "to everyone"), to: broadcast)
        try await receiver.wait(for: 1)
        #expect(receiver.payloads == [Data("to everyone".utf8)])
        try await socket.close()
        await receiver.stop()
    }

    @Test("bad parameters and use after close throw")
    func badParametersAndClose() async throws {
        await #expect(throws: GCDAsyncSocketError.self) { try await UDPSocket.bind(host: "", port: 0) }
        await #expect(throws: GCDAsyncSocketError.self) { try await UDPSocket.bind(host: "127.0.0.1", port: 70_000) }
        let socket = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        #expect(socket.localPort != 0)
        await #expect(throws: GCDAsyncSocketError.self) {
            try await socket.send(ByteBuffer(string: "x"), toHost: "127.0.0.1", port: 0)
        }
        var first = socket.datagrams.makeAsyncIterator()
        var second = socket.datagrams.makeAsyncIterator()
        do {
            _ = try await second.next()
            Issue.record("a second iterator was served")
        } catch let error as GCDAsyncSocketError {
            #expect(error.code == .badConfig)
        }
        try await socket.close()
        try await socket.close()
        let end = try await first.next()
        #expect(end == nil)
        do {
            try await socket.send(ByteBuffer(string: "late"), toHost: "127.0.0.1", port: 9)
            Issue.record("a send after close went out")
        } catch let error as GCDAsyncSocketError {
            #expect(error.code == .closed)
        }
    }

    @Test("a slow consumer makes the engine stop reading; the kernel drops the excess")
    func aSlowConsumerStopsReading() async throws {
        let receiver = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let sender = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let target = receiver.localAddress
        let total = 3_000
        for sequence in 0..<total {
            try await sender.send(Self.numbered(sequence, size: 1_000), to: target)
        }
        // Nobody consumed yet. Now drain; sentinels (sent until one arrives) mark the end.
        let seen = NIOLockedValueBox<[Int]>([])
        let sentinelSeen = NIOLockedValueBox(false)
        let consumer = Task {
            for try await datagram in receiver.datagrams {
                let sequence = Self.sequence(of: datagram.data)
                if sequence >= 1_000_000 {
                    sentinelSeen.withLockedValue { $0 = true }
                    return
                }
                seen.withLockedValue { $0.append(sequence) }
            }
        }
        var attempts = 0
        while !sentinelSeen.withLockedValue({ $0 }) && attempts < 200 {
            attempts += 1
            try await sender.send(Self.numbered(1_000_000 + attempts, size: 8), to: target)
            try await Task.sleep(for: .milliseconds(20))
        }
        consumer.cancel()
        let sequences = seen.withLockedValue { $0 }
        #expect(sentinelSeen.withLockedValue { $0 })
        #expect(sequences.first == 0)
        #expect(sequences == sequences.sorted())
        #expect(Set(sequences).count == sequences.count)
        // The engine held at most its buffer (high watermark 512 + one read batch) plus what the kernel kept.
        #expect(sequences.count < total, "received \(sequences.count) of \(total): the engine never stopped")
        print("slow consumer: \(sequences.count) of \(total) datagrams kept, \(total - sequences.count) dropped")
        try await sender.close()
        try await receiver.close()
    }

    @Test("100,000 datagrams through the async face arrive intact and in order, loss counted")
    func oneHundredThousandDatagrams() async throws {
        let receiver = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let sender = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let target = receiver.localAddress
        let total = 100_000
        let window = 128
        let progress = UDPProgress()
        let consumer = Task { () -> (count: Int, corrupt: Int, outOfOrder: Int) in
            var count = 0
            var corrupt = 0
            var outOfOrder = 0
            var last = -1
            for try await datagram in receiver.datagrams {
                let sequence = Self.sequence(of: datagram.data)
                if datagram.data != Self.numbered(sequence, size: 64) { corrupt += 1 }
                if sequence <= last { outOfOrder += 1 }
                last = sequence
                count += 1
                progress.seen(sequence)
                if sequence == total - 1 { break }
            }
            return (count, corrupt, outOfOrder)
        }
        for sequence in 0..<total {
            try await sender.send(Self.numbered(sequence, size: 64), to: target)
            // Pacing: at most `window` datagrams ahead of the newest one the consumer saw (losses do not stall it,
            // later datagrams still advance the newest; a bounded wait covers a lost tail).
            if sequence % 32 == 31 { await progress.wait(forAtLeast: sequence - window, timeout: .seconds(2)) }
        }
        let ending = Task {
            try await Task.sleep(for: .seconds(5))
            try await receiver.close()
        }
        let result = try await consumer.value
        ending.cancel()
        let lost = total - result.count
        print("100,000 datagrams: \(result.count) received, \(lost) lost (\(Double(lost) / 1_000.0)%)")
        #expect(result.corrupt == 0)
        #expect(result.outOfOrder == 0)
        // With pacing on loopback nothing should be lost; report it rather than hide it, and fail on more than 0.1%.
        #expect(lost <= total / 1_000, "lost \(lost) of \(total)")
        try await sender.close()
        try? await receiver.close()
    }

    /// `size` bytes: `sequence` as a UInt32, then byte `i` is `sequence + i` (mod 256), copied in runs from a ramp
    /// (a byte-by-byte loop in a debug build kept a thread of the cooperative pool busy for seconds).
    static func numbered(_ sequence: Int, size: Int) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(max(size, 4))
        buffer.writeInteger(UInt32(truncatingIfNeeded: sequence))
        var index = 4
        while index < size {
            let start = Int(UInt8(truncatingIfNeeded: sequence &+ index))
            let count = min(256, size - index)
            buffer.writeBytes(ramp[start..<start + count])
            index += count
        }
        return buffer
    }

    private static let ramp: [UInt8] = (0..<512).map { UInt8(truncatingIfNeeded: $0) }

    static func sequence(of buffer: ByteBuffer) -> Int {
        Int(buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) ?? 0)
    }
}

/// The newest sequence number a consumer saw, awaitable (a lock, not an actor: it is updated per datagram).
final class UDPProgress {
    private let lock = NIOLock()
    private var newest = -1
    private var waiters: [(sequence: Int, id: Int, continuation: CheckedContinuation<Void, Never>)] = []
    private var nextID = 0

    func seen(_ sequence: Int) {
        let due: [CheckedContinuation<Void, Never>] = lock.withLock {
            newest = max(newest, sequence)
            guard !waiters.isEmpty else { return [] }
            let ready = waiters.filter { $0.sequence <= newest }.map(\.continuation)
            waiters.removeAll { $0.sequence <= newest }
            return ready
        }
        for continuation in due { continuation.resume() }
    }

    /// Returns once `sequence` (or a later one) was seen, or after `timeout` (a lost tail must not stall the test).
    func wait(forAtLeast sequence: Int, timeout: Duration) async {
        if lock.withLock({ newest >= sequence }) { return }
        let id = lock.withLock { () -> Int in
            nextID += 1
            return nextID
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            self.expire(id)
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let satisfied = lock.withLock { () -> Bool in
                if newest >= sequence { return true }
                waiters.append((sequence, id, continuation))
                return false
            }
            if satisfied { continuation.resume() }
        }
        timer.cancel()
    }

    private func expire(_ id: Int) {
        let due: [CheckedContinuation<Void, Never>] = lock.withLock {
            let ready = waiters.filter { $0.id == id }.map(\.continuation)
            waiters.removeAll { $0.id == id }
            return ready
        }
        for continuation in due { continuation.resume() }
    }
}

// Its state is behind `lock`.
extension UDPProgress: @unchecked Sendable {}
