import Foundation
import TetherStore

/// Writes a store file of each format with the real stores: the seeds of `Fuzz/Seeds/FuzzRecordFile` (each
/// prefixed with its mode byte).
func writeSeeds(into directory: URL) async {
    let notes = [
        Note(
            id: UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")!,
            date: Date(timeIntervalSinceReferenceDate: 786_000_000.25),
            content: "Buy milk"
        ),
        Note(
            id: UUID(uuidString: "0E984725-C51C-4BF4-9960-E1C80E27ABA0")!,
            date: Date(timeIntervalSinceReferenceDate: 0),
            content: "Call Ann <re: \"plans\"> & Tuesday\nsecond line ✓"
        ),
    ]
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-seeds-\(getpid())")
    do {
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        for (mode, name) in [(0, "xml"), (1, "binary"), (2, "archive")] {
            let url = scratch.appendingPathComponent("NotesList.\(name)")
            switch mode {
            case 0: try await PropertyListStore<Note>(url: url, format: .xml).insert(contentsOf: notes)
            case 1: try await PropertyListStore<Note>(url: url, format: .binary).insert(contentsOf: notes)
            default: try await ArchiveStore<Note>(url: url).insert(contentsOf: notes)
            }
            let file = try Data(contentsOf: url)
            try (Data([UInt8(mode)]) + file).write(to: directory.appendingPathComponent("store-\(name)"))
            // The archive again for Tether's own readers (mode 3).
            if mode == 2 {
                try (Data([3]) + file).write(to: directory.appendingPathComponent("readers-archive"))
            }
        }
        print("wrote seeds into \(directory.path)")
    } catch {
        print("writing seeds failed: \(error)")
        exit(1)
    }
}
