import Foundation
import NIOConcurrencyHelpers
import NIOCore
import TetherSockets

/// The `udp` scenario: a `UDPSocket` sends numbered datagrams to a ``UDPReceiver`` as fast as it can (or paced, in
/// the soak) for a fixed time; afterwards every datagram is accounted for: received once and intact, or missing,
/// and the missing ones are compared with the kernel's drop counter for the receiving socket.
enum UDPScenario {
    /// One flood's account.
    struct Result {
        var sent = 0
        var sendErrors = 0
        var seconds = 0.0
        var tally = SequenceTally()
        var kernelDrops: Int?
        var missing: Int { sent - (tally.received - tally.duplicated - tally.corrupted) }
        /// Missing datagrams the kernel did not count as dropped: lost inside Tether.
        var unaccounted: Int { missing - (kernelDrops ?? 0) }
        var clean: Bool {
            kernelDrops != nil && unaccounted == 0 && tally.duplicated == 0 && tally.reordered == 0
                && tally.corrupted == 0 && sendErrors == 0
        }
    }

    static func datagram(_ sequence: UInt64, size: Int) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(size)
        buffer.writeInteger(sequence)
        buffer.writeRepeatingByte(UInt8(truncatingIfNeeded: sequence), count: max(0, size - 8))
        return buffer
    }

    /// Sends for `seconds`; with `pause`, sleeps that long after each `burst` datagrams (the soak's pacing).
    static func flood(
        seconds: Double,
        size: Int,
        burst: Int = 1_024,
        pause: Duration? = nil,
        stop: (@Sendable () -> Bool)? = nil
    ) async throws -> Result {
        let receiver = try UDPReceiver()
        let sender = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let target = try SocketAddress(ipAddress: "127.0.0.1", port: receiver.port)
        var result = Result()
        let start = ProcessProbe.now()
        let end = start + seconds
        var sequence: UInt64 = 0
        sending: while true {
            for _ in 0..<burst {
                do {
                    try await sender.send(datagram(sequence, size: size), to: target)
                    result.sent += 1
                } catch {
                    result.sendErrors += 1
                }
                sequence += 1
            }
            if ProcessProbe.now() >= end || stop?() == true { break sending }
            if let pause { try? await Task.sleep(for: pause) }
        }
        result.seconds = ProcessProbe.now() - start
        // Settle: until nothing arrived for 300 ms (at most 10 s); loopback delivers inside sendto, so what is still
        // to come is queued in the kernel or the socket.
        let settleDeadline = ProcessProbe.now() + 10
        while ProcessProbe.now() < settleDeadline {
            let (tally, last) = receiver.snapshot()
            if tally.received >= result.sent || ProcessProbe.now() - last > 0.3 { break }
            try? await Task.sleep(for: .milliseconds(50))
        }
        result.tally = receiver.snapshot().tally
        result.kernelDrops = UDPReceiver.kernelDrops(port: receiver.port)
        receiver.close()
        try? await sender.close()
        return result
    }

    static func run(_ options: StressOptions) async throws -> Bool {
        let duration = options.double("--duration", default: 30)
        let size = options.int("--size", default: 64)
        print("\n== UDP: UDPSocket → GCDAsyncUdpSocket on 127.0.0.1, \(size)-byte datagrams, \(duration) s, unpaced")
        let cpuStart = ProcessProbe.cpuSeconds()
        // Bounded as a whole: a send that never returned would otherwise hold the run.
        let outcome = NIOLockedValueBox<Result?>(nil)
        let finished = await Deadline.run(seconds: duration + 60) {
            let result = try? await flood(seconds: duration, size: size)
            outcome.withLockedValue { $0 = result }
        }
        guard finished, let result = outcome.withLockedValue({ $0 }) else {
            print("check: the flood did not finish within \(Int(duration + 60)) s, or could not start → FAIL")
            return false
        }
        let cpuEnd = ProcessProbe.cpuSeconds()
        let received = result.tally.received
        print(
            "sent \(result.sent) in \(String(format: "%.1f", result.seconds)) s = "
                + String(format: "%.0f datagrams/s", Double(result.sent) / result.seconds)
                + "; received \(received) = "
                + String(format: "%.0f datagrams/s", Double(received) / result.seconds)
        )
        print(
            "missing \(result.missing), kernel drop counter (/proc/net/udp) \(result.kernelDrops.map(String.init) ?? "not found"), "
                + "unaccounted \(result.unaccounted); duplicated \(result.tally.duplicated), reordered \(result.tally.reordered), "
                + "corrupted \(result.tally.corrupted), send errors \(result.sendErrors)"
        )
        print(
            String(
                format: "CPU: %.1f s (user %.1f, sys %.1f) beside %.1f s wall; load average %@",
                (cpuEnd.user - cpuStart.user) + (cpuEnd.system - cpuStart.system),
                cpuEnd.user - cpuStart.user,
                cpuEnd.system - cpuStart.system,
                result.seconds,
                ProcessProbe.loadAverage()
            )
        )
        print(
            "check: every datagram received once, intact and in order, or counted by the kernel → \(result.clean ? "PASS" : "FAIL")"
        )
        return result.clean
    }
}
