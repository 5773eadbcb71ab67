import Dispatch
import Foundation
import NIOConcurrencyHelpers
import TetherNotes

/// The push latency from a change to a watcher: a watcher subscribed on the last server of a deployment (the other
/// one of two), a writer on the first adding notes one at a time. For each note the writer records when it sent the
/// add and when the reply came; the watcher when the change arrived. Both clients are in this process, so one
/// monotonic clock times all three.
enum PushLatencyRun {
    /// What a run measured, in nanoseconds, for the timed changes.
    struct Result {
        /// From the writer sending the add to the watcher receiving the change (the store's write included).
        var fromSend: [Int64] = []
        /// From the writer receiving the add's reply to the watcher receiving the change (negative when the push
        /// came first).
        var fromReply: [Int64] = []
        /// The writer's round trip (add sent to reply).
        var roundTrip: [Int64] = []
        /// Timed changes the watcher never saw within 10 s of the last write.
        var missing = 0
        /// Wall seconds and CPU seconds of the timed part.
        var wall = 0.0
        var processCPU = 0.0
        var postgresCPU = 0.0
    }

    /// Sends `warmup` untimed then `changes` timed adds.
    static func run(
        _ deployment: NotesDeployment,
        warmup: Int,
        changes: Int,
        postmaster: Int32?
    ) async throws -> Result {
        let watcher = try await RemoteNoteStore.connect(host: "127.0.0.1", port: deployment.ports.last ?? 0)
        let writer = try await RemoteNoteStore.connect(host: "127.0.0.1", port: deployment.ports[0])
        let stream = try await watcher.changes()
        let arrivals = NIOLockedValueBox([UUID: UInt64]())
        let total = warmup + changes
        let watching = Task {
            do {
                for try await change in stream {
                    let now = DispatchTime.now().uptimeNanoseconds
                    guard case .added(let note) = change else { continue }
                    let count = arrivals.withLockedValue { arrivals in
                        arrivals[note.id] = now
                        return arrivals.count
                    }
                    if count >= total { return }
                }
            } catch {
                print("the watcher's stream failed: \(error)")
            }
        }
        var sent: [(id: UUID, send: UInt64, reply: UInt64)] = []
        sent.reserveCapacity(changes)
        var start = CPUSample.now(postmaster: postmaster)
        for index in 0..<total {
            if index == warmup { start = CPUSample.now(postmaster: postmaster) }
            let send = DispatchTime.now().uptimeNanoseconds
            let note = try await writer.add("push \(index): " + String(repeating: "x", count: 64))
            let reply = DispatchTime.now().uptimeNanoseconds
            if index >= warmup { sent.append((note.id, send, reply)) }
        }
        let end = CPUSample.now(postmaster: postmaster)
        let waitEnd = DispatchTime.now().uptimeNanoseconds + 10_000_000_000
        while arrivals.withLockedValue({ $0.count }) < total, DispatchTime.now().uptimeNanoseconds < waitEnd {
            try await Task.sleep(for: .milliseconds(10))
        }
        watching.cancel()
        await writer.close()
        await watcher.close()
        var result = Result(wall: end.wall - start.wall)
        result.processCPU = end.process - start.process
        result.postgresCPU = end.postgres - start.postgres
        let seen = arrivals.withLockedValue { $0 }
        for entry in sent {
            result.roundTrip.append(Int64(entry.reply) - Int64(entry.send))
            guard let arrival = seen[entry.id] else {
                result.missing += 1
                continue
            }
            result.fromSend.append(Int64(arrival) - Int64(entry.send))
            result.fromReply.append(Int64(arrival) - Int64(entry.reply))
        }
        return result
    }
}
