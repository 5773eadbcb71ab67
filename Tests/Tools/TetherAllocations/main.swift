import Foundation

// The allocation harness: each case's allocations per operation, Tether's face beside the engine's, in one run.
// `TetherAllocationTests` runs it and checks the counts against `Tests/Data/allocation-budgets.json`;
// `scripts/allocations.sh` prints the table of BENCHMARKS.md.
//
//   TetherAllocations [--only TEXT] [--rounds N] [--warm-up N] [--json FILE]

var only: [String] = []
var rounds = 3
var warmUp = 10
var jsonPath: String?
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--only": only.append(arguments.next() ?? "")
    case "--rounds": rounds = arguments.next().flatMap(Int.init) ?? rounds
    case "--warm-up": warmUp = arguments.next().flatMap(Int.init) ?? warmUp
    case "--json": jsonPath = arguments.next()
    default:
        FileHandle.standardError.write(Data("unknown argument \(argument)\n".utf8))
        exit(64)
    }
}

guard AllocationMeter.isInstalled else {
    FileHandle.standardError.write(Data("the counting allocator is not installed (Linux with glibc only)\n".utf8))
    exit(69)
}

do {
    let peers = try await PeerServers(frameBatch: DecoderWorkloads.wire(count: AllocationCase.batch))
    let host = RunLoopHost()
    var engines: [String: AllocationResult] = [:]
    var report = AllocationReport()
    for item in AllocationCase.all(peers: peers, host: host) {
        guard only.isEmpty || only.contains(where: { item.name.contains($0) }) else { continue }
        let engineKey = "\(item.name.split(separator: ".").first ?? "")/\(item.engine.name)"
        let engine: AllocationResult
        if let known = engines[engineKey] {
            engine = known
        } else {
            engine = try await AllocationMeter.measure(
                item.engine.workload,
                iterations: item.engine.iterations,
                warmUp: warmUp,
                rounds: rounds
            )
            engines[engineKey] = engine
        }
        let tether = try await AllocationMeter.measure(
            item.tether,
            iterations: item.iterations,
            warmUp: warmUp,
            rounds: rounds
        )
        report.rows.append(.init(name: item.name, tether: tether, engineName: item.engine.name, engine: engine))
        print(
            "\(item.name): \(AllocationReport.format(tether.allocations)) allocations/op "
                + "(engine \(AllocationReport.format(engine.allocations)))"
        )
    }
    print(report.table)
    if let jsonPath {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(report).write(to: URL(fileURLWithPath: jsonPath))
    }
    try await peers.stop()
    exit(0)
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
