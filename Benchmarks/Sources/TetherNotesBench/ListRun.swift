import Dispatch
import TetherNotes
import TetherStore

/// `list` apart from the mix (its cost grows with the table): one client listing a table of a fixed size again and
/// again, beside `NoteDAO.findAll()` straight on the store, in interleaved rounds.
enum ListRun {
    /// Lists per second, each round, for both variants.
    struct Result {
        var throughServer: [Double] = []
        var direct: [Double] = []
        /// The median over rounds of each round's server rate / direct rate.
        var ratio: Double {
            Statistics.median(zip(throughServer, direct).map { $0 / max($1, 1e-9) })
        }
    }

    /// Fills the first store up to `size` notes, then runs `rounds` rounds of `seconds` per variant.
    static func run(_ deployment: NotesDeployment, size: Int, rounds: Int, seconds: Double) async throws -> Result {
        let existing = try await deployment.stores[0].count()
        if existing < size {
            let notes = (existing..<size).map {
                Note(content: "listed note \($0): " + String(repeating: "x", count: 60))
            }
            try await deployment.insert(contentsOf: notes)
        }
        let expected = try await deployment.stores[0].count()
        let client = try await RemoteNoteStore.connect(host: "127.0.0.1", port: deployment.ports[0])
        do {
            let result = try await measure(
                client: client,
                dao: deployment.daos[0],
                expected: expected,
                rounds: rounds,
                seconds: seconds
            )
            await client.close()
            return result
        } catch {
            await client.close()
            throw error
        }
    }

    private static func measure(
        client: RemoteNoteStore,
        dao: NoteDAO,
        expected: Int,
        rounds: Int,
        seconds: Double
    ) async throws -> Result {
        var result = Result()
        for round in 0..<rounds {
            for variant in round % 2 == 0 ? [0, 1] : [1, 0] {
                let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
                let start = DispatchTime.now().uptimeNanoseconds
                var lists = 0
                while DispatchTime.now().uptimeNanoseconds < deadline {
                    let count = variant == 0 ? try await client.list().count : try await dao.findAll().count
                    guard count == expected else { throw BenchError("listed \(count) notes, not \(expected)") }
                    lists += 1
                }
                let rate = Double(lists) / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                if variant == 0 { result.throughServer.append(rate) } else { result.direct.append(rate) }
            }
        }
        return result
    }
}
