// Scenario on a rate-limited v0 (a tbf qdisc), where the async face's sends wait in its gate for room in the kernel:
//   cancelled-never-leaves: a cancelled task's send that waits is withdrawn: it throws CancellationError and never
//   reaches the wire; every send that returned did.
import Foundation
import NIOCore
import TetherSockets

/// Sends from many tasks at once fill the kernel's buffer; the rest wait in the gate. Then every task is cancelled.
func cancelledNeverLeaves() async throws -> String {
    let tap = try WireTap(interface: "v1")
    let socket = try await UDPSocket.bind(host: "10.77.0.1", port: 0)
    let target = try SocketAddress(ipAddress: "10.77.0.99", port: 9)
    let count = 600
    let (started, starting) = AsyncStream.makeStream(of: Int.self)
    var tasks: [Task<Void, any Error>] = []
    for tag in 1...count {
        tasks.append(
            Task {
                starting.yield(tag)
                try await socket.send(ByteBuffer(bytes: tagged(UInt32(tag), size: 1_000)), to: target)
            }
        )
    }
    var begun = 0
    for await _ in started {
        begun += 1
        if begun == count { break }
    }
    for task in tasks { task.cancel() }
    var sent = Set<UInt32>()
    var cancelled = Set<UInt32>()
    for (index, task) in tasks.enumerated() {
        switch await task.result {
        case .success: sent.insert(UInt32(index + 1))
        case .failure(is CancellationError): cancelled.insert(UInt32(index + 1))
        case .failure(let error): throw ProbeFailure("tag \(index + 1): \(error)")
        }
    }
    // A cancelled send that waited and was not withdrawn would have been sent: then most sends return.
    guard cancelled.count >= count / 4 else {
        throw ProbeFailure("only \(cancelled.count) of \(count) sends were withdrawn; \(sent.count) sent")
    }
    // The marker waits behind everything that was not withdrawn: when it is on the wire, so is every earlier one.
    let marker = UInt32(10_000)
    try await socket.send(ByteBuffer(bytes: tagged(marker, size: 1_000)), to: target)
    let seen = try await onThread { try tap.tags(toPort: 9, until: marker) }.dropLast()
    let leaked = cancelled.intersection(seen)
    guard leaked.isEmpty else { throw ProbeFailure("cancelled, yet on the wire: \(leaked.sorted().prefix(20))") }
    // Every datagram on the wire was one whose send returned; one the tap missed is in its own drop count (a busy
    // machine lets the tap's buffer fill before it reads).
    let tapDrops = tap.drops()
    guard Set(seen).isSubset(of: sent), seen.count == Set(seen).count, sent.count - seen.count <= tapDrops else {
        throw ProbeFailure(
            "on the wire \(seen.count) datagrams, \(sent.count) sends returned, the tap dropped \(tapDrops)"
        )
    }
    try await socket.close()
    return
        "\(sent.count) returned, \(seen.count) on the wire + \(tapDrops) the tap dropped, \(cancelled.count) cancelled "
        + "and withdrawn, none left"
}
