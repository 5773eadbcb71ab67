import Foundation

/// Every figure of a run, printed at the end as the tables of BENCHMARKS.md ("Notes service").
struct NotesReport {
    /// One deployment and client count: the rounds through the servers and straight on the stores.
    struct Cell {
        var kind: NotesDeployment.Kind
        var clients: Int
        var throughServers: [ThroughputRun.Result] = []
        var withAccounts: [ThroughputRun.Result] = []
        var direct: [ThroughputRun.Result] = []
    }

    var cells: [Cell] = []
    var pushes: [(kind: NotesDeployment.Kind, result: PushLatencyRun.Result)] = []
    var lists: [(kind: NotesDeployment.Kind, size: Int, result: ListRun.Result)] = []

    /// Adds a round's three results to the cell of `kind` and `clients`.
    mutating func add(
        _ kind: NotesDeployment.Kind,
        clients: Int,
        server: ThroughputRun.Result,
        accounts: ThroughputRun.Result,
        direct: ThroughputRun.Result
    ) {
        if !cells.contains(where: { $0.kind == kind && $0.clients == clients }) {
            cells.append(Cell(kind: kind, clients: clients))
        }
        let index = cells.firstIndex { $0.kind == kind && $0.clients == clients }!
        cells[index].throughServers.append(server)
        cells[index].withAccounts.append(accounts)
        cells[index].direct.append(direct)
    }

    /// The tables, in Markdown.
    func lines() -> [String] {
        var lines = [
            "", "### Operations per second (add, edit, remove), medians over rounds", "",
            "| deployment | clients | through the server(s) | op p50 / p99 | CPU per op | straight on the store(s) "
                + "| CPU per op | server / direct: ratio of medians (paired median) | errors |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for cell in cells {
            let server = cell.throughServers
            let direct = cell.direct
            let latencies = server.flatMap(\.latencies)
            let ratios = zip(server, direct).map { $0.rate / max($1.rate, 1e-9) }
            let errors = (server + direct).reduce(0) { $0 + $1.errors }
            let ratioOfMedians =
                Statistics.median(server.map(\.rate)) / max(Statistics.median(direct.map(\.rate)), 1e-9)
            lines.append(
                "| \(cell.kind.rawValue) | \(cell.clients) | \(Statistics.rate(Statistics.median(server.map(\.rate)))) "
                    + "| \(Statistics.duration(Statistics.percentile(latencies, 0.5))) / "
                    + "\(Statistics.duration(Statistics.percentile(latencies, 0.99))) "
                    + "| \(cpu(server)) | \(Statistics.rate(Statistics.median(direct.map(\.rate)))) | \(cpu(direct)) "
                    + "| \(String(format: "%.2f× (%.2f×)", ratioOfMedians, Statistics.median(ratios))) | \(errors) |"
            )
        }
        lines += [
            "", "### With accounts: the same mix through servers with accounts, every client logged in with a token",
            "",
            "| deployment | clients | without accounts | CPU per op | with accounts | CPU per op "
                + "| with / without: ratio of medians (paired median) | errors |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for cell in cells where cell.withAccounts.contains(where: { $0.operations > 0 }) {
            let (server, accounts) = (cell.throughServers, cell.withAccounts)
            let ratios = zip(accounts, server).map { $0.rate / max($1.rate, 1e-9) }
            let ratioOfMedians =
                Statistics.median(accounts.map(\.rate)) / max(Statistics.median(server.map(\.rate)), 1e-9)
            lines.append(
                "| \(cell.kind.rawValue) | \(cell.clients) | \(Statistics.rate(Statistics.median(server.map(\.rate)))) "
                    + "| \(cpu(server)) | \(Statistics.rate(Statistics.median(accounts.map(\.rate)))) | \(cpu(accounts)) "
                    + "| \(String(format: "%.2f× (%.2f×)", ratioOfMedians, Statistics.median(ratios))) "
                    + "| \(accounts.reduce(0) { $0 + $1.errors }) |"
            )
        }
        lines += [
            "", "### Push latency: a writer's add to a watcher's change", "",
            "| deployment | changes | from the add sent: p50 / p99 | from the add's reply: p50 / p99 "
                + "| the writer's round trip: p50 / p99 | missing |",
            "|---|---|---|---|---|---|",
        ]
        for (kind, result) in pushes {
            lines.append(
                "| \(kind.rawValue) | \(result.fromSend.count) | \(pair(result.fromSend)) | \(pair(result.fromReply)) "
                    + "| \(pair(result.roundTrip)) | \(result.missing) |"
            )
        }
        lines += [
            "", "### `list` apart: one client, medians over rounds", "",
            "| deployment | notes | through the server | `NoteDAO.findAll()` | server / direct (paired median) |",
            "|---|---|---|---|---|",
        ]
        for (kind, size, result) in lists {
            lines.append(
                "| \(kind.rawValue) | \(size) | \(Statistics.rate(Statistics.median(result.throughServer)))/s "
                    + "| \(Statistics.rate(Statistics.median(result.direct)))/s "
                    + "| \(String(format: "%.2f×", result.ratio)) |"
            )
        }
        return lines
    }

    /// "N µs (this process M + PostgreSQL P)" per operation, medians over rounds.
    private func cpu(_ results: [ThroughputRun.Result]) -> String {
        let total = Statistics.median(results.map(\.cpuPerOperation))
        let postgres = Statistics.median(results.map { $0.postgresCPU * 1e6 / Double(max($0.operations, 1)) })
        if postgres == 0 { return String(format: "%.0f µs", total) }
        return String(format: "%.0f µs (PostgreSQL %.0f)", total, postgres)
    }

    private func pair(_ values: [Int64]) -> String {
        "\(Statistics.duration(Statistics.percentile(values, 0.5))) / "
            + "\(Statistics.duration(Statistics.percentile(values, 0.99)))"
    }
}
