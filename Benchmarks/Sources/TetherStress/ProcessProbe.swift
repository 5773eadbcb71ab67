import Dispatch
import Foundation

/// What the kernel says about a process: resident memory, open descriptors, CPU time, limits and load.
enum ProcessProbe {
    /// Resident memory in bytes of `pid` (self by default), the `VmRSS` line of `/proc/PID/status`.
    static func residentBytes(pid: Int32? = nil) -> Int {
        let path = pid.map { "/proc/\($0)/status" } ?? "/proc/self/status"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 2, let kib = Int(fields[1]) { return kib * 1024 }
        }
        return 0
    }

    /// The number of open descriptors of this process (entries of `/proc/self/fd`, minus the one listing it).
    static func openDescriptors() -> Int {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return -1 }
        return entries.count - 1
    }

    /// What the open descriptors point at, counted by kind (`anon_inode:[eventfd]`, `socket`, a path); a socket
    /// is named by its line in `/proc/net/{tcp,tcp6,udp,udp6,unix}` when it has one.
    static func descriptorTargets() -> [String: Int] {
        var kinds: [String: Int] = [:]
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for entry in entries {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)")
            else { continue }
            if target.hasPrefix("socket:[") {
                let inode = String(target.dropFirst(8).dropLast())
                kinds["socket \(socketDescription(inode: inode))", default: 0] += 1
            } else {
                kinds[target, default: 0] += 1
            }
        }
        return kinds
    }

    /// The table and local/remote fields of a socket's inode in /proc/net, or "?".
    static func socketDescription(inode: String) -> String {
        for table in ["tcp", "tcp6", "udp", "udp6", "unix"] {
            guard let text = try? String(contentsOfFile: "/proc/net/\(table)", encoding: .utf8) else { continue }
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: " ")
                let inodeField = table == "unix" ? 6 : 9
                if fields.count > inodeField, fields[inodeField] == inode {
                    if table == "unix" { return "unix \(fields.count > 7 ? String(fields[7]) : "")" }
                    return "\(table) \(fields[1]) → \(fields[2]) state \(fields[3])"
                }
            }
        }
        return "inode \(inode)"
    }

    /// CPU seconds (user, system) of this process, every thread, from `getrusage(RUSAGE_SELF)`.
    static func cpuSeconds() -> (user: Double, system: Double) {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        return (user, system)
    }

    /// CPU seconds (user + system) of another process so far, from `/proc/PID/stat` (clock ticks).
    static func cpuSeconds(pid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        // After the command name: state is field 3, utime field 14 and stime field 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Raises the soft `RLIMIT_NOFILE` to the hard limit; returns (soft before, soft after, hard).
    @discardableResult
    static func raiseDescriptorLimit() -> (before: UInt64, after: UInt64, hard: UInt64) {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let before = UInt64(limit.rlim_cur)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return (before, UInt64(limit.rlim_cur), UInt64(limit.rlim_max))
    }

    /// The first three fields of `/proc/loadavg`.
    static func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?"
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    /// Seconds on a monotonic clock.
    static func now() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }

    /// Nanoseconds on a monotonic clock.
    static func nanoseconds() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }

    /// Bytes as MiB with one decimal.
    static func mib(_ bytes: Int) -> String {
        String(format: "%.1f MiB", Double(bytes) / 1_048_576)
    }
}
