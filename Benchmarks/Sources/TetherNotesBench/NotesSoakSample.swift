import CMallocStats
import Foundation

/// One sample of the soak's process: resident memory, the live heap and open descriptors.
struct NotesSoakSample {
    var seconds: Double
    var resident: Int
    /// The bytes the allocator has handed out and not had back (glibc's `mallinfo2`: `uordblks + hblkhd`): what the
    /// program holds, without the memory the allocator keeps for reuse, which resident memory counts too.
    var heap: Int
    var descriptors: Int

    /// This process now.
    static func now(seconds: Double) -> NotesSoakSample {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        let kilobytes = line.flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Int($0) } ?? 0
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
        return NotesSoakSample(seconds: seconds, resident: kilobytes * 1024, heap: liveHeap(), descriptors: descriptors)
    }

    /// `t s: RSS x MiB, heap y MiB, n descriptors`.
    var line: String {
        String(
            format: "%5.0f s: RSS %.1f MiB, heap %.1f MiB, %d descriptors",
            seconds,
            Double(resident) / 1_048_576,
            Double(heap) / 1_048_576,
            descriptors
        )
    }

    private static func liveHeap() -> Int {
        Int(c_malloc_stats_live_heap())
    }
}
