import Foundation
import Testing

/// The TCP sockets of this process that are still open on a port, read from `/proc`: a socket counts while one of
/// the process's descriptors refers to it. Tests run in parallel in one process, so a count of every descriptor
/// would see the other tests' sockets; a port (a listener's, chosen by the kernel) belongs to one test.
enum OpenSockets {
    /// The socket inodes that this process's descriptors refer to.
    static func descriptorInodes() -> Set<UInt64> {
        let directory = "/proc/self/fd"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var inodes = Set<UInt64>()
        for name in names {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(name)"),
                target.hasPrefix("socket:["), target.hasSuffix("]")
            else { continue }
            if let inode = UInt64(target.dropFirst("socket:[".count).dropLast()) { inodes.insert(inode) }
        }
        return inodes
    }

    /// Which ends of the connections of a listener on a port count.
    enum Ends {
        /// Both: the port is the local or the remote one.
        case all
        /// The clients: the port is the remote one.
        case clients
        /// The accepted ends: the port is the local one.
        case accepted
    }

    /// How many connected (not listening) TCP sockets of this process are `ends` of connections to `port`.
    ///
    /// The kernel's tables are read in pages while other tests open and close sockets, and a read can skip an entry
    /// that did not change; the count is of the entries seen by either of two reads, so a socket is missed only if
    /// both skip it.
    static func connected(port: Int, ends: Ends = .all) -> Int {
        connectedInodes(port: port, ends: ends).union(connectedInodes(port: port, ends: ends)).count
    }

    /// The inodes of this process's connected TCP sockets that are `ends` of connections to `port`, in one read.
    private static func connectedInodes(port: Int, ends: Ends) -> Set<UInt64> {
        let ours = descriptorInodes()
        var inodes = Set<UInt64>()
        for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
            guard let text = readWhole(table) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 9, let inode = UInt64(fields[9]), ours.contains(inode) else { continue }
                // State 0A is LISTEN.
                guard fields[3] != "0A" else { continue }
                let ports = (ends == .all ? [fields[1], fields[2]] : ends == .clients ? [fields[2]] : [fields[1]])
                    .compactMap {
                        $0.split(separator: ":").last.flatMap { Int($0, radix: 16) }
                    }
                if ports.contains(port) { inodes.insert(inode) }
            }
        }
        return inodes
    }

    /// The inodes of this process's UDP sockets bound to one of `ports` (read while they are open: a port may be
    /// bound again by another test once they closed, an inode is not reused so soon).
    ///
    /// A read of the kernel's table can skip an entry while other tests change it, so the table is read again
    /// (up to 100 times) until a socket was seen on every port.
    static func udpInodes(boundTo ports: Set<Int>) -> Set<UInt64> {
        var inodes = Set<UInt64>()
        var seen = Set<Int>()
        for _ in 0..<100 where !seen.isSuperset(of: ports) {
            let ours = descriptorInodes()
            for table in ["/proc/self/net/udp", "/proc/self/net/udp6"] {
                guard let text = readWhole(table) else { continue }
                for line in text.split(separator: "\n").dropFirst() {
                    let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                    guard fields.count > 9, let inode = UInt64(fields[9]), ours.contains(inode),
                        let port = fields[1].split(separator: ":").last.flatMap({ Int($0, radix: 16) }),
                        ports.contains(port)
                    else { continue }
                    inodes.insert(inode)
                    seen.insert(port)
                }
            }
        }
        return inodes
    }

    /// Waits until no descriptor of this process refers to one of `inodes` (polling, as
    /// ``waitUntilClosed(port:ends:timeout:)``); fails after `timeout`.
    static func waitUntilClosed(inodes: Set<UInt64>, timeout: Duration = .seconds(10)) async throws {
        let deadline = ContinuousClock.now + timeout
        var open = descriptorInodes().intersection(inodes).count
        while open > 0 {
            guard ContinuousClock.now < deadline else {
                Issue.record("\(open) of \(inodes.count) sockets still open after \(timeout)")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
            open = descriptorInodes().intersection(inodes).count
        }
    }

    /// A `/proc` file read to its end (they report a size of 0, and a reader that trusts the size stops short).
    static func readWhole(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var bytes = Data()
        while let chunk = try? handle.read(upToCount: 65_536), !chunk.isEmpty { bytes.append(chunk) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Waits until none of this process's connected sockets uses `port`, polling the kernel's tables (the close
    /// happens on an event loop; nothing else tells the test). Fails after `timeout` with the count still open.
    static func waitUntilClosed(port: Int, ends: Ends = .all, timeout: Duration = .seconds(10)) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var open = connected(port: port, ends: ends)
        while open > 0 {
            guard clock.now < deadline else {
                Issue.record("\(open) sockets on port \(port) still open after \(timeout)")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
            open = connected(port: port, ends: ends)
        }
    }
}
