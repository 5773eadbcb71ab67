import Dispatch
import Foundation
import TetherSockets

/// The receiving end of the UDP scenario: a `GCDAsyncUdpSocket` bound to 127.0.0.1 that receives continuously and
/// accounts for each numbered datagram (its first 8 bytes; the rest is the number's low byte, so a changed byte is
/// counted as corrupted). State lives on the delegate queue.
final class UDPReceiver: GCDAsyncUdpSocketDelegate, @unchecked Sendable {
    let queue = DispatchQueue(label: "stress.udp-receiver")
    private(set) var socket: GCDAsyncUdpSocket!
    private var tally = SequenceTally()
    private var lastArrival = 0.0

    init() throws {
        socket = GCDAsyncUdpSocket(delegate: self, delegateQueue: queue)
        try socket.bind(toPort: 0, interface: "127.0.0.1")
        try socket.beginReceiving()
    }

    var port: Int { Int(socket.localPort()) }

    func udpSocket(
        _ sock: GCDAsyncUdpSocket,
        didReceive data: Data,
        fromAddress address: Data,
        withFilterContext filterContext: Any?
    ) {
        lastArrival = ProcessProbe.now()
        guard data.count >= 8 else {
            tally.corrupted += 1
            return
        }
        var sequence: UInt64 = 0
        for byte in data.prefix(8) { sequence = sequence << 8 | UInt64(byte) }
        let filler = UInt8(truncatingIfNeeded: sequence)
        if data.dropFirst(8).contains(where: { $0 != filler }) {
            tally.corrupted += 1
            return
        }
        tally.record(sequence)
    }

    /// The account so far and the time of the last arrival.
    func snapshot() -> (tally: SequenceTally, lastArrival: Double) {
        queue.sync { (tally, lastArrival) }
    }

    func close() {
        socket.close()
    }

    /// The kernel's drop counter of the IPv4 UDP socket bound to 127.0.0.1:`port` (`/proc/net/udp`, last column).
    /// The table is read to its end: procfs hands it out a page per read, and the socket's line may be on any page.
    static func kernelDrops(port: Int) -> Int? {
        let fd = open("/proc/net/udp", O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { _ = Glibc.close(fd) }
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
        return nil
    }
}
