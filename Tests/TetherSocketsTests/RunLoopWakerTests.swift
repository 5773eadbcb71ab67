import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing
import TetherConcurrency

@testable import TetherSockets

/// An object whose release the tests observe through a weak reference.
private final class Marker: Sendable {}

/// A weak reference to a mailbox.
private struct WeakMailbox {
    weak var mailbox: RunLoopMailbox?
    init(_ mailbox: RunLoopMailbox) { self.mailbox = mailbox }
}

@Suite("RunLoopWaker: one wake timer per run loop, nothing kept for released sockets", .timeLimit(.minutes(1)))
struct RunLoopWakerTests {
    @Test("a thousand mailboxes on one run loop share one wake timer, and each is freed once released")
    func mailboxesShareOneTimerAndAreFreed() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let modes = [RunLoop.Mode.default, RunLoop.Mode("TetherWakerTestMode")]
        var released: [WeakMailbox] = []
        do {
            let mailboxes = (0..<1000).map { _ in RunLoopMailbox(runLoop: home.runLoop, modes: modes) }
            released = mailboxes.map(WeakMailbox.init)
            let ran = NIOLockedValueBox(0)
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                let finish = NIOLockedValueBox<CheckedContinuation<Void, Never>?>(done)
                for mailbox in mailboxes {
                    mailbox.post {
                        let count = ran.withLockedValue {
                            $0 += 1
                            return $0
                        }
                        if count == 1000 { finish.withLockedValue { $0.take()?.resume() } }
                    }
                }
            }
            #expect(RunLoopWaker.shared.timerModes(for: home.runLoop) == [modes])
        }
        // The last callback resumed this task from inside its mailbox's drain, which holds the mailbox until it
        // returns: a round trip through the run loop waits for that.
        try await home.sync {}
        #expect(released.allSatisfy { $0.mailbox == nil })
    }

    @Test("a mailbox released with callbacks pending on a stopped run loop is freed, and so is what they hold")
    func pendingCallbacksOfAStoppedRunLoopDoNotKeepTheMailbox() async throws {
        let home = RunLoopThread()
        home.stop()
        weak var weakMailbox: RunLoopMailbox?
        weak var weakMarker: Marker?
        do {
            let mailbox = RunLoopMailbox(runLoop: home.runLoop)
            let marker = Marker()
            weakMailbox = mailbox
            weakMarker = marker
            mailbox.post { _ = marker }
            mailbox.post { _ = marker }
        }
        #expect(weakMarker == nil)
        #expect(weakMailbox == nil)
    }

    @Test("a connected AsyncSocket, disconnected from another thread and released, is freed with its mailbox")
    func aReleasedSocketIsFreed() async throws {
        weak var weakSocket: AsyncSocket?
        let home: RunLoopThread
        do {
            let client = try await RunLoopClient.connect()
            weakSocket = client.socket
            home = client.home
            client.socket.disconnect()
            client.peer.close()
            client.listener.close()
        }
        // What may still hold the socket for a moment: the callback that recorded "connected" (the test goes on as
        // it records, before it returns) on the run loop, and an engine callback running on an event loop. A round
        // trip through the run loop and through every event loop waits for both to return.
        try await home.sync {}
        for loop in MultiThreadedEventLoopGroup.singleton.makeIterator() { try await loop.submit {}.get() }
        #expect(weakSocket == nil)
        home.stop()
    }
}
