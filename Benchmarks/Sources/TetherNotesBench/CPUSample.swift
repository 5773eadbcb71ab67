import Dispatch
import Foundation

/// Wall time and CPU time at one moment: this process (`getrusage(RUSAGE_SELF)`, every thread: the servers and the
/// clients) and the PostgreSQL server's processes (`/proc`, the postmaster and its children).
struct CPUSample {
    /// Seconds on a monotonic clock.
    var wall: Double
    /// User + system seconds of this process.
    var process: Double
    /// User + system seconds of the PostgreSQL processes (0 without a server).
    var postgres: Double

    /// Now, with the PostgreSQL processes under `postmaster` (if any).
    static func now(postmaster: Int32?) -> CPUSample {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        return CPUSample(
            wall: Double(DispatchTime.now().uptimeNanoseconds) / 1e9,
            process: user + system,
            postgres: postmaster.map(treeSeconds(root:)) ?? 0
        )
    }

    /// The CPU seconds of `root` and its children: the root's own time and that of its children it has waited for
    /// (backends that ended: `cutime`, `cstime`), plus each living child's own.
    static func treeSeconds(root: Int32) -> Double {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var total = 0.0
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry), let fields = statFields(pid: pid), fields.count > 14 else { continue }
            // After the command name: ppid is field 4, utime 14, stime 15, cutime 16, cstime 17.
            let parent = Int32(fields[1]) ?? 0
            let own = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
            if pid == root {
                total += own + (Double(fields[13]) ?? 0) + (Double(fields[14]) ?? 0)
            } else if parent == root {
                total += own
            }
        }
        return total / ticks
    }

    /// The fields of `/proc/PID/stat` after the command name (state first).
    private static func statFields(pid: Int32) -> [Substring]? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }
}
