import Foundation
import NIOCore
import Testing

@testable import TetherSockets

#if canImport(Glibc)
import Glibc
#endif

/// A flood beyond the receive buffer: 20,000 datagrams of 1 KiB, numbered, sent as fast as
/// the kernel takes them to a `UDPSocket` whose consumer is not iterating. The receiver's queue stays bounded (the
/// stream stops reading at its high watermark, then the kernel drops), and every datagram is accounted for: each one
/// either arrives intact, once and in order, or is counted in the kernel's drop counter for the socket
/// (`/proc/net/udp`).
@Suite(.timeLimit(.minutes(1)))
struct UDPFloodTests {
    static let count = 20_000
    static let size = 1_024

    /// The datagram numbered `sequence`: its number, then its low byte repeated.
    static func datagram(_ sequence: UInt32) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(size)
        buffer.writeInteger(sequence)
        buffer.writeRepeatingByte(UInt8(truncatingIfNeeded: sequence), count: size - 4)
        return buffer
    }

    /// The kernel's drop counter of the IPv4 UDP socket bound to 127.0.0.1:`port` (`/proc/net/udp`, last column).
    ///
    /// The table is read to its end, one `read` after another: procfs reports a size of 0 and hands the table out a
    /// page at a time, so a single read misses the socket's line whenever a busy test run has enough UDP sockets open
    /// to push it past the first page.
    static func kernelDrops(port: Int) throws -> Int {
        let fd = open("/proc/net/udp", O_RDONLY)
        guard fd >= 0 else { throw POSIXError(.ENOENT) }
        defer { close(fd) }
        var table: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            table += chunk[0..<count]
        }
        let local = String(format: "0100007F:%04X", port)
        for line in String(decoding: table, as: UTF8.self).split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            if fields.count > 12, fields[1] == local, let drops = Int(fields[fields.count - 1]) { return drops }
        }
        throw POSIXError(.ENOENT)
    }

    @Test func everyDatagramOfAFloodArrivesIntactOnceInOrderOrIsCountedAsDropped() async throws {
        let receiver = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let sender = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let target = try SocketAddress(ipAddress: "127.0.0.1", port: receiver.localPort)
        for sequence in 0..<UInt32(Self.count) {
            try await sender.send(Self.datagram(sequence), to: target)
        }
        // Loopback delivers inside `sendto`: once the flood returned, each datagram is either queued (in the kernel's
        // buffer or the stream's) or dropped and counted, and the counter is final. Nothing was read while the flood
        // ran; now drain exactly what was not dropped (a missing one would hang the drain, and the time limit fails
        // the test).
        let drops = try Self.kernelDrops(port: receiver.localPort)
        var received: [UInt32] = []
        var corrupt = 0
        var iterator = receiver.datagrams.makeAsyncIterator()
        while received.count < Self.count - drops, let datagram = try await iterator.next() {
            let sequence = datagram.data.getInteger(at: datagram.data.readerIndex, as: UInt32.self) ?? 0
            if datagram.data != Self.datagram(sequence) { corrupt += 1 }
            received.append(sequence)
        }
        #expect(corrupt == 0)
        #expect(received == received.sorted() && Set(received).count == received.count, "reordered or duplicated")
        #expect(received.count + drops == Self.count, "received \(received.count), dropped \(drops)")
        // Bounded: the flood did not all pile up in the process (the stream's watermark is 512, the kernel's buffer
        // a few hundred datagrams of this size).
        #expect(received.count < Self.count / 2, "received \(received.count) of \(Self.count)")
        #expect(!received.isEmpty)
        try await sender.close()
        try await receiver.close()
    }
}
