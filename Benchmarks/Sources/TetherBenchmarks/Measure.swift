import Dispatch
import Foundation

/// Resident memory of this process, in bytes (from /proc/self/statm).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Samples resident memory every 10 ms while `body` runs; returns the body's result and the peak.
func withPeakMemory<T>(_ body: () async throws -> T) async rethrows -> (T, peak: Int) {
    let peak = PeakSampler()
    peak.start()
    let result = try await body()
    return (result, peak.stop())
}

final class PeakSampler: @unchecked Sendable {
    private let lock = NSLock()
    private var peak = 0
    private var running = true

    func start() {
        peak = residentBytes()
        Thread.detachNewThread { [self] in
            while lock.withLock({ running }) {
                let now = residentBytes()
                lock.withLock { peak = max(peak, now) }
                usleep(10_000)
            }
        }
    }

    func stop() -> Int {
        lock.withLock {
            running = false
            return max(peak, residentBytes())
        }
    }
}

/// Seconds since an arbitrary start.
func now() -> Double {
    Double(DispatchTime.now().uptimeNanoseconds) / 1e9
}

/// CPU seconds used by this process so far, all threads (a peer process is not counted).
func processCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

func format(_ value: Double, _ unit: String) -> String {
    if value >= 1e9 { return String(format: "%.2f G%@", value / 1e9, unit) }
    if value >= 1e6 { return String(format: "%.2f M%@", value / 1e6, unit) }
    if value >= 1e3 { return String(format: "%.1f k%@", value / 1e3, unit) }
    return String(format: "%.1f %@", value, unit)
}

func mib(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }

/// CPU seconds (user + system, every thread) this process used so far, from `getrusage(RUSAGE_SELF)`.
func rusageCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
    let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return user + system
}
