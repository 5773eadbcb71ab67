import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import TetherSockets

/// Waits until `condition` holds, checking every 5 ms; fails the test after `timeout`.
func waitUntil(
    _ what: String,
    timeout: Duration = .seconds(10),
    _ condition: @escaping @Sendable () -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out waiting until \(what)")
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// Makes `home` run its run loop in `mode`, and returns once it does.
func enter(_ mode: RunLoop.Mode, on home: RunLoopThread) async {
    home.mode = mode
    let probe = RunLoopMailbox(runLoop: home.runLoop, modes: [mode])
    await withCheckedContinuation { (entered: CheckedContinuation<Void, Never>) in
        probe.post { entered.resume() }
    }
}

@Suite("AsyncSocket (RunLoop era): delivery across mode changes, moves and new lives", .timeLimit(.minutes(1)))
struct AsyncSocketDeliveryTests {
    @Test("setRunLoopModes while callbacks wait in the old modes: they and later ones run in the new modes, in order")
    func aModeChangeReleasesCallbacksWaitingInTheOldModes() async throws {
        let client = try await RunLoopClient.connect()
        defer { client.close() }
        let custom = RunLoop.Mode("AsyncSocketDeliveryTestsMode")
        await enter(custom, on: client.home)
        let socket = client.socket
        socket.readData(toLength: 3, withTimeout: -1, tag: 1)
        client.peer.send("abc")
        // The read's callback is handed to the run loop in the default mode, where it cannot run now.
        try await waitUntil("the read's callback waits") { socket.mailbox.waitingCount == 1 }
        #expect(socket.setRunLoopModes([custom]))
        try await client.recorder.wait { $0.contains(.read(Data("abc".utf8), tag: 1)) }
        socket.readData(toLength: 1, withTimeout: -1, tag: 2)
        client.peer.send("d")
        let events = try await client.recorder.wait { $0.contains(.read(Data("d".utf8), tag: 2)) }
        #expect(events.suffix(2) == [.read(Data("abc".utf8), tag: 1), .read(Data("d".utf8), tag: 2)])
        #expect(client.recorder.violations.isEmpty)
    }

    @Test("moveToRunLoop inside a callback: the rest of the batch runs on the new run loop, in order, not at once")
    func aMoveInsideACallbackTakesTheRestOfTheBatch() async throws {
        let target = RunLoopThread(name: "target")
        defer { target.stop() }
        let places = NIOLockedValueBox<[String]>([])
        let client = try await RunLoopClient.connect { recorder in
            recorder.expectedRunLoop = nil
            recorder.onRead = { sock, _, tag in
                let here = RunLoop.current === target.runLoop ? "target" : "home"
                places.withLockedValue { $0.append("\(tag)@\(here)") }
                if tag == 1 { _ = sock.moveToRunLoop(target.runLoop) }
            }
        }
        defer { client.close() }
        let socket = client.socket
        // The home thread waits at a gate while the three reads complete: their callbacks form one batch.
        let gate = DispatchSemaphore(value: 0)
        client.home.perform { gate.wait() }
        for tag in 1...3 { socket.readData(toLength: 1, withTimeout: -1, tag: tag) }
        client.peer.send("xyz")
        try await waitUntil("three callbacks wait") { socket.mailbox.waitingCount == 3 }
        gate.signal()
        try await client.recorder.wait { $0.contains(.read(Data("z".utf8), tag: 3)) }
        #expect(places.withLockedValue { $0 } == ["1@home", "2@target", "3@target"])
        // Later callbacks stay on the new run loop.
        socket.readData(toLength: 1, withTimeout: -1, tag: 4)
        client.peer.send("w")
        try await client.recorder.wait { $0.contains(.read(Data("w".utf8), tag: 4)) }
        #expect(places.withLockedValue { $0 }.last == "4@target")
    }

    @Test("disconnect off the run loop, then connect at once: the first life's onSocketDidDisconnect still comes")
    func anOffThreadDisconnectThenConnectReportsTheFirstLife() async throws {
        let client = try await RunLoopClient.connect { $0.expectedRunLoop = nil }
        defer { client.close() }
        let other = RunLoopThread(name: "second-life")
        defer { other.stop() }
        let socket = client.socket
        // The first run loop is held at a gate: the disconnect's callback cannot run before the next life starts.
        let gate = DispatchSemaphore(value: 0)
        client.home.perform { gate.wait() }
        defer { gate.signal() }
        socket.disconnect()
        let port = client.listener.port
        try await other.sync { try socket.connect(toHost: "127.0.0.1", onPort: port, withTimeout: 5) }
        let second = try await onThread { client.listener.accept() }
        defer { second.close() }
        let connected = RunLoopEvent.connected(host: "127.0.0.1", port: port)
        let events = try await client.recorder.wait { $0.filter { $0 == connected }.count == 2 }
        // The second connect asks onSocketWillConnect on its own thread first; the first life's end comes before
        // anything of the second on the run loop.
        #expect(events == [.willConnect, connected, .willConnect, .disconnected, connected])
    }
}
