import Foundation
import Testing
import TetherTestSupport

@testable import TetherStore

#if canImport(Glibc)
import Glibc
#endif

/// SIGKILLs a writer process at random moments and checks after each reopen that every acknowledged change is there.
///
/// The writer is the `TetherStoreCrashWriter` executable, built next to the test bundle (`swift build --build-tests`
/// builds it; `swift test` does too).
struct CrashRecoveryTests {
    enum Expectation {
        case present
        case absent
        /// A change was attempted but not acknowledged: either state is correct.
        case either
    }

    static func writerURL() throws -> URL {
        try BuiltProduct.require("TetherStoreCrashWriter")
    }

    /// Runs the writer until `acks` acknowledgements have been read plus a random pause, SIGKILLs it and returns every
    /// line it printed.
    static func runAndKill(
        writer: URL,
        kind: String,
        file: URL,
        seed: UInt64,
        acks: Int,
        pauseMicros: UInt32
    ) throws
        -> [String]
    {
        let process = ChildProcess()
        process.executableURL = writer
        process.arguments = [kind, file.path, String(seed)]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let pid = process.processIdentifier
        // A watchdog ends a writer that stops making progress, so the test cannot hang.
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 30, execute: watchdog)
        defer { watchdog.cancel() }

        let handle = output.fileHandleForReading
        var buffer = Data()
        var lines: [String] = []
        var acknowledged = 0
        var killed = false
        while true {
            let chunk = handle.nextChunk()
            if chunk.isEmpty { break }
            buffer.append(chunk)
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                lines.append(line)
                if line.hasPrefix("ack-") { acknowledged += 1 }
            }
            if !killed && acknowledged >= acks {
                // The random moment: somewhere inside one of the following store calls.
                usleep(pauseMicros)
                kill(pid, SIGKILL)
                killed = true
            }
        }
        process.waitUntilExit()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        if !killed || process.terminationReason != .uncaughtSignal {
            throw StoreError(
                code: .io,
                message: "the writer ended by itself (status \(process.terminationStatus)): \(stderr)"
            )
        }
        return lines
    }

    static func open(_ kind: String, _ file: URL) throws -> any RecordStore<Note> {
        switch kind {
        case "plistXML": try PropertyListStore<Note>(url: file, format: .xml)
        case "plistBinary": try PropertyListStore<Note>(url: file, format: .binary)
        case "archive": try ArchiveStore<Note>(url: file)
        default: try SQLiteStore<Note>(url: file)
        }
    }

    /// Blocks until no store holds the file store's lock (`<file>.lock`): takes the lock, then lets it go.
    static func waitUntilUnlocked(_ file: URL) throws {
        let fd = Glibc.open(file.path + ".lock", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return }
            throw StoreError(code: .io, message: "cannot open \(file.path).lock: errno \(errno)")
        }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw StoreError(code: .io, message: "flock: errno \(errno)") }
        }
        flock(fd, LOCK_UN)
    }

    @Test(arguments: ["plistXML", "plistBinary", "archive", "sqlite"])
    func everyAcknowledgedChangeSurvivesSIGKILLAtRandomMoments(kind: String) async throws {
        let writer = try Self.writerURL()
        try await withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("crash-\(kind).store")
            var expected: [UUID: Expectation] = [:]
            var generator = SystemRandomNumberGenerator()
            // 16 kill cycles per store in the suite; `TETHER_CRASH_ROUNDS=1000` for the reliability run (RELIABILITY.md).
            let rounds = ProcessInfo.processInfo.environment["TETHER_CRASH_ROUNDS"].flatMap { Int($0) } ?? 16
            var totalAcks = 0
            for round in 0..<rounds {
                let seed = generator.next()
                let acks = Int.random(in: 1...150, using: &generator)
                let pause = UInt32.random(in: 0...4_000, using: &generator)
                // Off the cooperative pool: the writer's output is read with blocking calls, for up to seconds.
                let lines = try await offPool {
                    try Self.runAndKill(
                        writer: writer,
                        kind: kind,
                        file: file,
                        seed: seed,
                        acks: acks,
                        pauseMicros: pause
                    )
                }
                for line in lines {
                    let parts = line.split(separator: " ")
                    guard parts.count == 2, let id = UUID(uuidString: String(parts[1])) else { continue }
                    switch parts[0] {
                    case "try-put", "try-del": expected[id] = .either
                    case "ack-put": expected[id] = .present
                    case "ack-del": expected[id] = .absent
                    default: break
                    }
                }
                totalAcks += lines.filter { $0.hasPrefix("ack-") }.count
                do {
                    let store = try Self.open(kind, file)
                    let notes = try await store.fetchAll()
                    let stored = Dictionary(uniqueKeysWithValues: notes.map { ($0.id, $0) })
                    for (id, expectation) in expected {
                        switch expectation {
                        case .present:
                            #expect(
                                stored[id] != nil,
                                "round \(round) seed \(seed): acknowledged note \(id) is missing"
                            )
                            if let note = stored[id] {
                                #expect(
                                    note.content.hasPrefix("c-\(id)"),
                                    "round \(round): note \(id) has wrong content"
                                )
                            }
                        case .absent:
                            #expect(stored[id] == nil, "round \(round) seed \(seed): deleted note \(id) came back")
                        case .either:
                            expected[id] = stored[id] == nil ? .absent : .present
                        }
                    }
                    for id in stored.keys where expected[id] == nil {
                        Issue.record("round \(round): note \(id) was never written")
                    }
                }
                // A released file store lets go of its lock when the store's last job on its queue ends, which may
                // be just after the `await` above returned (TetherStore's documentation says so): the next writer
                // must not start before the lock is free.
                if kind != "sqlite" { try await offPool { try Self.waitUntilUnlocked(file) } }
            }
            #expect(totalAcks > rounds)
            print("crash loop \(kind): \(rounds) SIGKILLs, \(totalAcks) acknowledged changes, every one checked")
        }
    }

    @Test(arguments: ["plistXML", "archive"])
    func aStoreOpenInAnotherProcessIsLockedAndTheOtherWayRound(kind: String) async throws {
        let writer = try Self.writerURL()
        try await withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("shared-\(kind).store")
            // This process holds the store: the writer process must refuse to open it.
            let held = Note(content: "held here")
            do {
                let store = try Self.open(kind, file)
                try await store.insert(held)
                let process = ChildProcess()
                process.executableURL = writer
                process.arguments = [kind, file.path, "1"]
                let errors = Pipe()
                process.standardOutput = Pipe()
                process.standardError = errors
                try process.run()
                let message = try await offPool {
                    String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                }
                await process.exited()
                #expect(process.terminationStatus == 2)
                #expect(message.contains("locked"), "\(message)")
                #expect(try await store.count() == 1)
            }
            // The writer process holds the store: opening it here is `.locked` until the writer is gone.
            let process = ChildProcess()
            process.executableURL = writer
            process.arguments = [kind, file.path, "2"]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = Pipe()
            try process.run()
            let watchdog = DispatchWorkItem { [pid = process.processIdentifier] in kill(pid, SIGKILL) }
            DispatchQueue.global().asyncAfter(deadline: .now() + 30, execute: watchdog)
            defer { watchdog.cancel() }
            let seen = try await offPool {
                var seen = Data()
                while !seen.contains(UInt8(ascii: "\n")) {
                    let chunk = output.fileHandleForReading.nextChunk()
                    if chunk.isEmpty { break }
                    seen.append(chunk)
                }
                return seen
            }
            #expect(String(decoding: seen, as: UTF8.self).hasPrefix("ready 1"))
            await expectStoreError(.locked) { try Self.open(kind, file) }
            kill(process.processIdentifier, SIGKILL)
            await process.exited()
            // The writer changes the store until it is killed, and may have deleted the note once it held five: what
            // it printed says whether it tried to.
            let printed = try await offPool { seen + output.fileHandleForReading.readDataToEndOfFile() }
            let triedToDelete = String(decoding: printed, as: UTF8.self).contains("try-del \(held.id)")
            let store = try Self.open(kind, file)
            let notes = try await store.fetchAll()
            #expect(notes.first?.id == held.id || triedToDelete)
        }
    }
}
