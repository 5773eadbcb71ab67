// TetherLivenessProbe: run by TetherSocketsTests inside a network namespace that the test creates (`unshare -rn`,
// `lo` up). Each scenario starts an echo server on 127.0.0.1, connects one face to it, checks an echo round trip,
// then drops every packet the server sends (`iptables -A INPUT -p tcp --sport <server port> -j DROP`): the peer
// falls silent without a FIN or a reset. The face must close on its own, with the error of the mechanism under test,
// and the probe prints one line:
//   PASS <scenario>: <the close as the face reported it>      or      FAIL <scenario>: <why>
// then exits 0 (pass) or 1 (fail).
//
//   TetherLivenessProbe keepalive-gcd | keepalive-runloop | keepalive-async
//                     | heartbeat-gcd | heartbeat-runloop | heartbeat-async
//
// Keepalive: idle 1 s, interval 1 s, 2 probes; heartbeat: a ping after 200 ms without writing, a reply within 500 ms.
import Dispatch
import Foundation
import NIOCore
import TetherSockets

#if canImport(Glibc)
import Glibc
#endif

struct ProbeFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Lines that the delegates report, awaited by the scenario.
final class Lines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    private var waiters: [(String, CheckedContinuation<String, Never>)] = []

    func add(_ line: String) {
        lock.lock()
        lines.append(line)
        let ready = waiters.filter { line.hasPrefix($0.0) }
        waiters.removeAll { line.hasPrefix($0.0) }
        lock.unlock()
        for (_, waiter) in ready { waiter.resume(returning: line) }
    }

    /// The first line that starts with `prefix` (waits for it).
    func first(_ prefix: String) async -> String {
        await withCheckedContinuation { continuation in
            lock.lock()
            if let line = lines.first(where: { $0.hasPrefix(prefix) }) {
                lock.unlock()
                continuation.resume(returning: line)
                return
            }
            waiters.append((prefix, continuation))
            lock.unlock()
        }
    }
}

func name(_ error: (any Error)?) -> String {
    guard let error else { return "nil" }
    if let own = error as? GCDAsyncSocketError {
        if own.posixErrorCode == .ETIMEDOUT { return "ETIMEDOUT" }
        return own.code == .heartbeatTimeout ? "heartbeatTimeout" : "\(own)"
    }
    let ns = error as NSError
    if ns.domain == NSPOSIXErrorDomain, ns.code == Int(ETIMEDOUT) { return "ETIMEDOUT" }
    if ns.domain == AsyncSocketErrorDomain, ns.code == AsyncSocketError.Code.heartbeatTimeoutError.rawValue {
        return "heartbeatTimeoutError"
    }
    return "\(ns.domain) \(ns.code)"
}

/// The echo server, and the client's GCD delegate: every callback becomes a line.
final class GCDLines: GCDAsyncSocketDelegate, @unchecked Sendable {
    let queue = DispatchQueue(label: "probe.tcp")
    let lines = Lines()
    let echoes: Bool
    private var kept: [GCDAsyncSocket] = []

    init(echoes: Bool) { self.echoes = echoes }

    func socket(_ sock: GCDAsyncSocket, didAcceptNewSocket newSocket: GCDAsyncSocket) {
        kept.append(newSocket)
        newSocket.readData(withTimeout: -1, tag: 0)
    }
    func socket(_ sock: GCDAsyncSocket, didConnectToHost host: String, port: UInt16) { lines.add("connected") }
    func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        if echoes {
            sock.write(data, withTimeout: -1, tag: 0)
            sock.readData(withTimeout: -1, tag: 0)
        } else {
            lines.add("read \(String(decoding: data, as: UTF8.self))")
        }
    }
    func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {
        lines.add("closed \(name(err))")
    }
}

final class RunLoopLines: AsyncSocketDelegate, @unchecked Sendable {
    let lines = Lines()
    func onSocket(_ sock: AsyncSocket, didConnectToHost host: String, port: UInt16) { lines.add("connected") }
    func onSocket(_ sock: AsyncSocket, didRead data: Data, withTag tag: Int) {
        lines.add("read \(String(decoding: data, as: UTF8.self))")
    }
    func onSocket(_ sock: AsyncSocket, willDisconnectWithError err: (any Error)?) { lines.add("closed \(name(err))") }
}

/// Drops every packet the server sends to the client: the peer falls silent.
func silence(serverPort: UInt16) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", "iptables -A INPUT -p tcp --sport \(serverPort) -j DROP"]
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw ProbeFailure("iptables exited \(process.terminationStatus)") }
}

let keepalive = try TCPKeepalive(idle: .seconds(1), interval: .seconds(1), count: 2)
let heartbeat = try Heartbeat(ping: Array("PING\n".utf8), interval: .milliseconds(200), timeout: .milliseconds(500))
let hello = Data("hello\n".utf8)

func run(_ scenario: String) async throws -> String {
    let server = GCDLines(echoes: true)
    let listener = GCDAsyncSocket(delegate: server, delegateQueue: server.queue)
    try listener.accept(onInterface: "127.0.0.1", port: 0)
    let port = listener.localPort
    let usesKeepalive = scenario.hasPrefix("keepalive")
    let expected =
        usesKeepalive ? "ETIMEDOUT" : scenario.hasSuffix("runloop") ? "heartbeatTimeoutError" : "heartbeatTimeout"
    switch scenario.split(separator: "-").last {
    case "gcd":
        let client = GCDLines(echoes: false)
        let socket = GCDAsyncSocket(delegate: client, delegateQueue: client.queue)
        if usesKeepalive { socket.keepalive = keepalive }
        try socket.connect(toHost: "127.0.0.1", onPort: port, withTimeout: 20)
        socket.write(hello, withTimeout: -1, tag: 1)
        socket.readData(toLength: UInt(hello.count), withTimeout: -1, tag: 1)
        _ = await client.lines.first("read hello")
        // The heartbeat starts on the connected socket, after the round trip: a loaded machine's slow echo of an
        // earlier ping must not close it before the peer is silenced.
        if !usesKeepalive { socket.heartbeat = heartbeat }
        try silence(serverPort: port)
        let closed = await client.lines.first("closed")
        return closed == "closed \(expected)" ? "PASS \(scenario): \(closed)" : "FAIL \(scenario): \(closed)"
    case "runloop":
        let client = RunLoopLines()
        let socket = AsyncSocket(delegate: client)
        if usesKeepalive { socket.keepalive = keepalive }
        let thread = Thread {
            do {
                try socket.connect(toHost: "127.0.0.1", onPort: port, withTimeout: 20)
                socket.write(hello, withTimeout: -1, tag: 1)
                socket.readData(toLength: UInt(hello.count), withTimeout: -1, tag: 1)
            } catch {
                client.lines.add("closed connect threw \(error)")
            }
            while true { _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.1)) }
        }
        thread.start()
        _ = await client.lines.first("read hello")
        // The heartbeat starts on the connected socket, after the round trip: a loaded machine's slow echo of an
        // earlier ping must not close it before the peer is silenced.
        if !usesKeepalive { socket.heartbeat = heartbeat }
        try silence(serverPort: port)
        let closed = await client.lines.first("closed")
        return closed == "closed \(expected)" ? "PASS \(scenario): \(closed)" : "FAIL \(scenario): \(closed)"
    case "async":
        let connection =
            usesKeepalive
            ? try await TCPConnection.connect(host: "127.0.0.1", port: Int(port), keepalive: keepalive)
            : try await TCPConnection.connect(host: "127.0.0.1", port: Int(port))
        try await connection.write(ByteBuffer(bytes: hello))
        _ = try await connection.read(toLength: hello.count)
        if !usesKeepalive { try await connection.setHeartbeat(heartbeat) }
        try silence(serverPort: port)
        do {
            while try await connection.readAvailable() != nil {}
            return "FAIL \(scenario): the stream ended cleanly"
        } catch {
            let closed = "closed \(name(error))"
            return closed == "closed \(expected)" ? "PASS \(scenario): \(closed)" : "FAIL \(scenario): \(closed)"
        }
    default:
        throw ProbeFailure("unknown scenario \(scenario)")
    }
}

let scenario = CommandLine.arguments.dropFirst().first ?? ""
// The probe's own deadline, far beyond what either mechanism needs (about 3 s and 1 s): a failure, not a wait.
DispatchQueue.global().asyncAfter(deadline: .now() + 30) {
    print("FAIL \(scenario): nothing closed the connection within 30 s")
    exit(1)
}
let verdict: String
do {
    verdict = try await run(scenario)
} catch {
    verdict = "FAIL \(scenario): \(error)"
}
print(verdict)
exit(verdict.hasPrefix("PASS") ? 0 : 1)
