// A writer process for the crash test: opens a store and changes it as fast as it can until it is killed.
//
// Usage: TetherStoreCrashWriter <plistXML|plistBinary|archive|sqlite> <file> <seed>
//        TetherStoreCrashWriter <kind> <file> fill <ballast>     (FillUntilFull.swift: ENOSPC on a small tmpfs)
// Stdout protocol, one line each, written with one write(2) so nothing sits in a buffer when SIGKILL arrives:
//   ready <count>        the store is open and holds <count> notes
//   try-put <uuid>       about to insert a note whose content is "c-<uuid>"
//   ack-put <uuid>       the insert returned: it is durable
//   try-del <uuid>       about to delete a note
//   ack-del <uuid>       the delete returned: it is durable
import Foundation
import TetherStore

func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("TetherStoreCrashWriter: \(message)\n".utf8))
    exit(2)
}

let arguments = CommandLine.arguments
let usage = "usage: TetherStoreCrashWriter <plistXML|plistBinary|archive|sqlite> <file> (<seed> | fill <ballast>)"
guard arguments.count == 4 || (arguments.count == 5 && arguments[3] == "fill") else { fail(usage) }
let url = URL(fileURLWithPath: arguments[2])

func openStore() throws -> any RecordStore<Note> {
    switch arguments[1] {
    case "plistXML": return try PropertyListStore<Note>(url: url, format: .xml)
    case "plistBinary": return try PropertyListStore<Note>(url: url, format: .binary)
    case "archive": return try ArchiveStore<Note>(url: url)
    case "sqlite": return try SQLiteStore<Note>(url: url)
    default: fail("unknown store kind \(arguments[1])")
    }
}

if arguments[3] == "fill" {
    await FillUntilFull.run(open: openStore, ballast: URL(fileURLWithPath: arguments[4]))
    exit(0)
}
guard let seed = UInt64(arguments[3]) else { fail(usage) }

let store: any RecordStore<Note>
do {
    store = try openStore()
} catch {
    fail("cannot open the store: \(error)")
}

/// A small deterministic generator (SplitMix64), so a run can be replayed from its seed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

do {
    var random = SplitMix64(state: seed)
    var present = try await store.fetchAll().map(\.id)
    // Some runs keep the store small, so that compactions (journal larger than the file) come every few dozen writes
    // and some kills land inside one.
    let cap = 20 + Int(seed % 300)
    emit("ready \(present.count)")
    while true {
        let deleteOdds = present.count > cap ? 1 : 8
        if present.count > 4 && Int.random(in: 0..<deleteOdds, using: &random) == 0 {
            let index = Int.random(in: 0..<present.count, using: &random)
            let id = present[index]
            emit("try-del \(id)")
            try await store.delete(id: id)
            emit("ack-del \(id)")
            present.swapAt(index, present.count - 1)
            present.removeLast()
        } else {
            let id = UUID()
            let padding = String(repeating: "x", count: Int.random(in: 0..<200, using: &random))
            emit("try-put \(id)")
            try await store.insert(Note(id: id, content: "c-\(id)\(padding)"))
            emit("ack-put \(id)")
            present.append(id)
        }
    }
} catch {
    fail("a store call failed: \(error)")
}
