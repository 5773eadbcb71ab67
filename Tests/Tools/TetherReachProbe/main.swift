// TetherReachProbe: a helper that the TetherReachability tests start inside a network namespace they created.
//
//   TetherReachProbe [--domain HOST | --address IP] [--witness] [--exhaust-descriptors] [--hold-tun NAME]
//
// Prints one JSON line per event, flushed at once:
//   {"event":"change", ...}    each delivered status (the change block), the first one included
//   {"event":"started", ...}   the synchronous status read right after startMonitoring() returned (it follows
//                              the first "change" line: that delivery was queued inside startMonitoring())
//   {"event":"stopped"}        after a "stop" command, {"event":"sync","id":N} after "sync N"
// Every status line has "manager" ("main", or "witness": a second manager with the same target, started with
// --witness, that keeps monitoring while "main" is stopped), "status", "statusCode", "interface",
// "interfaceType", "kind", "driver", "isExpensive", "route" (the serving route's description) and "lastError".
// --hold-tun NAME creates the tun device NAME (or attaches to it) before the managers start and holds it open, so
// that it has a carrier once it is up.
// --exhaust-descriptors lowers RLIMIT_NOFILE so that no descriptor can be opened (the back-end's socket() fails
// with EMFILE) until the "restore-descriptors" command, acknowledged by {"event":"restored"} before any delivery that
// the restore made possible: the limit is restored on the callback queue, so such a delivery queues behind it.
// "restore-descriptors wait" also waits (at most 20 s) for the main manager's retry to evaluate before acknowledging:
// the widest window a delivery could have to overtake the acknowledgement.
// Commands on stdin, one per line: "stop", "start", "sync <id>", "status" (prints the main manager's current
// status as {"event":"status", ...}), "restore-descriptors [wait]", "wait HOST SECONDS" (starts a manager for HOST,
// prints {"event":"waiting","host":HOST,"status":S} with its synchronous first status, then waits with
// waitForConnectivity(timeout:) and prints
// {"event":"waited", ...status fields} or {"event":"waitFailed","code":N,"error":TEXT}). Ends on stdin EOF or SIGTERM.
import Dispatch
import Foundation
import NIOCore
import TetherReachability

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let queue = DispatchQueue(label: "tether.reach-probe.callbacks")

/// One JSON line, ready to write.
func encode(_ object: [String: Any]) -> Data {
    guard var data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
        return Data("{\"event\":\"error\",\"message\":\"unencodable line\"}\n".utf8)
    }
    data.append(UInt8(ascii: "\n"))
    return data
}

/// Writes one line at once (unbuffered: stdout is a pipe).
func emit(_ line: Data) {
    FileHandle.standardOutput.write(line)
}

/// A status line: the delivered `status` (or the current one), with the interface of the manager's current path.
func statusLine(
    event: String,
    manager name: String,
    _ manager: NetworkReachabilityManager,
    status delivered: NetworkReachabilityStatus? = nil
) -> Data {
    let path = manager.path
    let status = delivered ?? path.status
    return encode([
        "event": event,
        "manager": name,
        "status": status.localizedDescription,
        "statusCode": status.rawValue,
        "interface": path.interfaceName.map { $0 as Any } ?? NSNull(),
        "interfaceType": path.interfaceType.map { $0.rawValue as Any } ?? NSNull(),
        "kind": path.interfaceKind.map { $0.rawValue as Any } ?? NSNull(),
        "driver": path.interfaceDriver.map { $0 as Any } ?? NSNull(),
        "isExpensive": path.isExpensive,
        "route": path.route.map { $0.description as Any } ?? NSNull(),
        "lastError": manager.lastError.map { "\($0)" as Any } ?? NSNull(),
    ])
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("TetherReachProbe: \(message)\n".utf8))
    exit(64)
}

func makeManager(arguments: [String]) -> NetworkReachabilityManager {
    var index = 0
    var manager: NetworkReachabilityManager?
    while index < arguments.count {
        switch arguments[index] {
        case "--domain" where index + 1 < arguments.count:
            manager = NetworkReachabilityManager(domain: arguments[index + 1], callbackQueue: queue)
            index += 2
        case "--address" where index + 1 < arguments.count:
            guard let address = try? SocketAddress(ipAddress: arguments[index + 1], port: 0) else {
                fail("not an IP address: \(arguments[index + 1])")
            }
            manager = NetworkReachabilityManager(address: address, callbackQueue: queue)
            index += 2
        case "--witness", "--exhaust-descriptors":
            index += 1
        case "--hold-tun" where index + 1 < arguments.count:
            index += 2
        default:
            fail("usage: TetherReachProbe [--domain HOST | --address IP] [--witness] [--exhaust-descriptors]")
        }
    }
    return manager ?? NetworkReachabilityManager(callbackQueue: queue)
}

let arguments = Array(CommandLine.arguments.dropFirst())
var managers: [(name: String, manager: NetworkReachabilityManager)] = [("main", makeManager(arguments: arguments))]
if arguments.contains("--witness") {
    managers.append(("witness", makeManager(arguments: arguments)))
}

func start(_ name: String, _ manager: NetworkReachabilityManager) {
    manager.setReachabilityStatusChangeBlock { status in
        emit(statusLine(event: "change", manager: name, manager, status: status))
    }
    manager.startMonitoring()
    let started = statusLine(event: "started", manager: name, manager)
    queue.async { emit(started) }
}

signal(SIGTERM, SIG_IGN)
let termination = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .global())
termination.setEventHandler {
    for (_, manager) in managers { manager.stopMonitoring() }
    exit(0)
}
termination.resume()

#if os(Linux)
/// The descriptor limit before `--exhaust-descriptors` lowered it.
nonisolated(unsafe) var savedDescriptorLimit = rlimit()

/// Lets no new descriptor be opened: the soft limit becomes the lowest free descriptor number.
func exhaustDescriptors() {
    // Dispatch opens its timer descriptor on first use: use a timer now, while descriptors can still be opened.
    let warm = DispatchSemaphore(value: 0)
    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1)) { warm.signal() }
    warm.wait()
    getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &savedDescriptorLimit)
    let lowestFree = dup(0)
    close(lowestFree)
    var limit = savedDescriptorLimit
    limit.rlim_cur = rlim_t(lowestFree)
    setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
}

func restoreDescriptors() {
    setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &savedDescriptorLimit)
}
#else
func exhaustDescriptors() { fail("--exhaust-descriptors is only supported on Linux") }
func restoreDescriptors() {}
#endif

#if os(Linux)
/// Creates (or attaches to) the tun device `name` and keeps it open for the probe's life: a tun device has a
/// carrier only while a process holds it.
func holdTun(_ name: String) -> Int32 {
    let descriptor = open("/dev/net/tun", O_RDWR | O_CLOEXEC)
    guard descriptor >= 0 else { fail("cannot open /dev/net/tun: errno \(errno)") }
    // struct ifreq: the name (IFNAMSIZ bytes), then the flags: IFF_TUN | IFF_NO_PI.
    var request = [UInt8](repeating: 0, count: 40)
    for (offset, byte) in name.utf8.prefix(15).enumerated() { request[offset] = byte }
    let flags: UInt16 = 0x0001 | 0x1000
    request[16] = UInt8(flags & 0xFF)
    request[17] = UInt8(flags >> 8)
    let tunSetInterface: UInt = 0x4004_54CA
    let result = request.withUnsafeMutableBytes { ioctl(descriptor, tunSetInterface, $0.baseAddress!) }
    guard result == 0 else { fail("TUNSETIFF \(name) failed: errno \(errno)") }
    return descriptor
}

if let position = arguments.firstIndex(of: "--hold-tun"), position + 1 < arguments.count {
    _ = holdTun(arguments[position + 1])
}
#endif

if arguments.contains("--exhaust-descriptors") {
    exhaustDescriptors()
}

for (name, manager) in managers {
    start(name, manager)
}

while let line = readLine() {
    let words = line.split(separator: " ").map(String.init)
    switch words.first {
    case "stop":
        managers[0].manager.stopMonitoring()
        let stopped = encode(["event": "stopped", "manager": "main"])
        queue.async { emit(stopped) }
    case "start":
        start(managers[0].name, managers[0].manager)
    case "status":
        let snapshot = statusLine(event: "status", manager: managers[0].name, managers[0].manager)
        queue.async { emit(snapshot) }
    case "restore-descriptors":
        let manager = managers[0].manager
        let waits = words.dropFirst().first == "wait"
        queue.sync {
            restoreDescriptors()
            let deadline = Date(timeIntervalSinceNow: 20)
            while waits, manager.networkReachabilityStatus == .unknown, Date() < deadline {
                usleep(10_000)
            }
            emit(encode(["event": "restored"]))
        }
    case "wait" where words.count == 3:
        let host = words[1]
        let seconds = Double(words[2]) ?? 0
        let waiter: NetworkReachabilityManager
        if let address = try? SocketAddress(ipAddress: host, port: 0) {
            waiter = NetworkReachabilityManager(address: address, callbackQueue: queue)
        } else {
            waiter = NetworkReachabilityManager(domain: host, callbackQueue: queue)
        }
        waiter.startMonitoring()
        emit(
            encode(["event": "waiting", "host": host, "status": waiter.networkReachabilityStatus.localizedDescription])
        )
        // Detached: the main thread is busy reading commands.
        Task.detached {
            do {
                let path = try await waiter.waitForConnectivity(timeout: .milliseconds(Int(seconds * 1000)))
                emit(
                    encode([
                        "event": "waited", "host": host, "status": path.status.localizedDescription,
                        "interface": path.interfaceName.map { $0 as Any } ?? NSNull(),
                        "kind": path.interfaceKind.map { $0.rawValue as Any } ?? NSNull(),
                    ])
                )
            } catch let error as NetworkReachabilityError {
                emit(encode(["event": "waitFailed", "host": host, "code": error.code.rawValue, "error": "\(error)"]))
            } catch {
                emit(encode(["event": "waitFailed", "host": host, "code": -1, "error": "\(error)"]))
            }
            waiter.stopMonitoring()
        }
    case "sync":
        let id = words.count > 1 ? words[1] : ""
        let sync = encode(["event": "sync", "id": id])
        queue.async { emit(sync) }
    default:
        let error = encode(["event": "error", "message": "unknown command: \(line)"])
        queue.async { emit(error) }
    }
}
for (_, manager) in managers {
    manager.stopMonitoring()
}
queue.sync {}
exit(0)
