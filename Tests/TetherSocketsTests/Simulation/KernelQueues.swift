import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What the kernel holds for a connected TCP descriptor, for a schedule that hung: the bytes received and not yet
/// read (`SIOCINQ`), the bytes written and not yet acknowledged (`SIOCOUTQ`), and the connection's state. On loopback
/// a sender's unacknowledged bytes pile up only while the receiver's buffer is full, that is while it does not read.
enum KernelQueues {
    /// `SIOCINQ` and `SIOCOUTQ` under the names Glibc exports for them (`FIONREAD`, `TIOCOUTQ`).
    private static let receiveQueueRequest = UInt(FIONREAD)
    private static let sendQueueRequest = UInt(TIOCOUTQ)

    /// The bytes `fd`'s kernel received and the process has not read, or nil when the ioctl fails.
    static func unread(_ fd: Int32) -> Int32? {
        var unread: Int32 = 0
        return ioctl(fd, receiveQueueRequest, &unread) == 0 ? unread : nil
    }

    /// The bytes `fd` wrote that its peer has not acknowledged, or nil when the ioctl fails.
    static func unacknowledged(_ fd: Int32) -> Int32? {
        var unacknowledged: Int32 = 0
        return ioctl(fd, sendQueueRequest, &unacknowledged) == 0 ? unacknowledged : nil
    }

    /// "unread N, unacknowledged M" for `fd`, or why not.
    static func describe(_ fd: Int32) -> String {
        var unread: Int32 = 0
        var unacknowledged: Int32 = 0
        guard ioctl(fd, receiveQueueRequest, &unread) == 0, ioctl(fd, sendQueueRequest, &unacknowledged) == 0 else {
            return "descriptor \(fd): ioctl failed (errno \(errno))"
        }
        return "descriptor \(fd): unread \(unread), unacknowledged \(unacknowledged)"
    }

    /// `ss -tinm` for the connection of `fd`, both ends (windows, retransmissions and their backoff, socket memory),
    /// on one line each; or why not.
    static func statistics(_ fd: Int32) -> String {
        guard let local = port(of: fd, peer: false) else { return "ss: no address" }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ss")
        process.arguments = ["-tinmH", "sport", "=", ":\(local)", "or", "dport", "=", ":\(local)"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        do {
            try process.run()
        } catch {
            return "ss: \(error)"
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        return "ss: "
            + text.split(whereSeparator: \.isNewline).map { $0.split(separator: " ").joined(separator: " ") }
            .joined(separator: " | ")
    }

    /// The descriptor of this process whose local address is the peer address of `fd` (the other end of a loopback
    /// connection both ends of which this process holds), if there is one.
    static func otherEnd(of fd: Int32) -> Int32? {
        guard let remote = port(of: fd, peer: true),
            let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        else { return nil }
        for entry in entries {
            guard let candidate = Int32(entry), candidate != fd, port(of: candidate, peer: false) == remote,
                port(of: candidate, peer: true) == port(of: fd, peer: false)
            else { continue }
            return candidate
        }
        return nil
    }

    /// The local (or, with `peer`, remote) port of an IPv4 or IPv6 socket `fd`.
    private static func port(of fd: Int32, peer: Bool) -> UInt16? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                peer ? getpeername(fd, $0, &length) : getsockname(fd, $0, &length)
            }
        }
        guard result == 0 else { return nil }
        // Both `sockaddr_in` and `sockaddr_in6` hold the port, big-endian, after the 2-byte family.
        guard [AF_INET, AF_INET6].contains(Int32(storage.ss_family)) else { return nil }
        return withUnsafeBytes(of: storage) { UInt16(bigEndian: $0.load(fromByteOffset: 2, as: UInt16.self)) }
    }
}
