import Foundation
import Testing

@testable import TetherSockets

/// Where and when RunLoop-era UDP callbacks run: the socket's run loop, in its modes, only while it runs.
@Suite(.timeLimit(.minutes(1)))
struct AsyncUdpSocketRunLoopTests {
    @Test("callbacks wait while the run loop runs in another mode, and arrive once it runs in the socket's mode")
    func callbacksWaitForTheSocketsMode() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        #expect(socket.runLoopModes() == [.default])
        let custom = RunLoop.Mode("TetherUdpTestMode")
        home.mode = custom
        let probe = RunLoopMailbox(runLoop: home.runLoop, modes: [custom])
        await withCheckedContinuation { (entered: CheckedContinuation<Void, Never>) in probe.post { entered.resume() } }
        // close posts DidClose before it returns; two passes in the custom mode later it still has not run.
        socket.close()
        for _ in 0..<2 {
            await withCheckedContinuation { (later: CheckedContinuation<Void, Never>) in probe.post { later.resume() } }
        }
        #expect(recorder.events.isEmpty)
        home.mode = .default
        try await recorder.wait(for: .closed)
        #expect(recorder.allRan(on: home.runLoop))
    }

    @Test("setRunLoopModes: callbacks run in the modes given; an empty array is refused")
    func setRunLoopModes() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        let custom = RunLoop.Mode("TetherUdpTestMode2")
        #expect(!socket.setRunLoopModes([]))
        #expect(socket.runLoopModes() == [.default])
        #expect(socket.setRunLoopModes([custom]))
        #expect(socket.runLoopModes() == [custom])
        home.mode = custom
        socket.receive(withTimeout: 0, tag: 1)
        try await recorder.wait(for: .notReceived(tag: 1, code: 5))
        #expect(recorder.allRan(on: home.runLoop))
        home.mode = .default
        socket.close()
    }

    @Test("moveToRunLoop: refused off the socket's run loop thread; on it, later callbacks run on the new run loop")
    func moveToRunLoop() async throws {
        let home = RunLoopThread(name: "old")
        let other = RunLoopThread(name: "new")
        defer {
            home.stop()
            other.stop()
        }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        try socket.bind(toAddress: "127.0.0.1", port: 0)
        socket.receive(withTimeout: 0, tag: 1)
        try await recorder.wait(for: .notReceived(tag: 1, code: 5))
        #expect(!socket.moveToRunLoop(other.runLoop))
        let moved = try await home.sync { socket.moveToRunLoop(other.runLoop) }
        #expect(moved)
        let sender = try await AsyncUdpTestSender.make()
        socket.receive(withTimeout: -1, tag: 2)
        try await sender.send("on the new loop", to: socket.localPort())
        try await recorder.wait(for: .received(Data("on the new loop".utf8), tag: 2, accepted: true))
        #expect(recorder.runLoops == [ObjectIdentifier(home.runLoop), ObjectIdentifier(other.runLoop)])
        socket.close()
        try await recorder.wait(for: .closed)
        #expect(recorder.runLoops.last == ObjectIdentifier(other.runLoop))
        await sender.close()
    }
}
