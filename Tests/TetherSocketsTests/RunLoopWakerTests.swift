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

@Suite("RunLoopWaker: one wake channel per run loop, nothing kept for released sockets", .timeLimit(.minutes(1)))
struct RunLoopWakerTests {
    @Test("a thousand mailboxes on one run loop share one wake channel, and each is freed once released")
    func mailboxesShareOneChannelAndAreFreed() async throws {
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
            #expect(RunLoopWaker.shared.wakeModes(for: home.runLoop) == [modes])
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

    @Test("after its first wake a channel wakes its run loop through its eventfd source, in order, from any thread")
    func aChannelSwitchesToItsSourceAndKeepsOrder() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let channel = RunLoopWaker.shared.channel(for: home.runLoop, modes: [.default, .common])
        // The first wake comes by the timer, and adds the source on the run loop's thread.
        try await home.sync {}
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            channel.perform { done.resume() }
        }
        #if os(Linux)
        #expect(channel.usesSource)
        #endif
        // Two threads hand over numbered blocks; each thread's blocks run in the order it handed them over.
        let seen = NIOLockedValueBox<[Int]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let left = NIOLockedValueBox(2_000)
            let finish = NIOLockedValueBox<CheckedContinuation<Void, Never>?>(done)
            for thread in 0..<2 {
                Thread.detachNewThread {
                    for index in 0..<1_000 {
                        channel.perform {
                            seen.withLockedValue { $0.append(thread * 1_000 + index) }
                            let remaining = left.withLockedValue {
                                $0 -= 1
                                return $0
                            }
                            if remaining == 0 { finish.withLockedValue { $0.take()?.resume() } }
                        }
                    }
                }
            }
        }
        let order = seen.withLockedValue { $0 }
        #expect(order.filter { $0 < 1_000 } == Array(0..<1_000))
        #expect(order.filter { $0 >= 1_000 } == Array(1_000..<2_000))
    }

    #if os(Linux)
    @Test("a callback ends the run(mode:before:) pass it ran in, as an input source's does, from the first one on")
    func aDeliveryEndsTheRunLoopPass() async throws {
        let ready = DispatchSemaphore(value: 0)
        let runLoop = NIOLockedValueBox<UncheckedSendableBox<RunLoop>?>(nil)
        let done = NIOLockedValueBox(false)
        let passes = NIOLockedValueBox(0)
        // A thread that waits until a far date, pass after pass, until a callback set `done`: with a wake that did
        // not end the pass (a timer), the loop would never look at `done` again and the test would time out.
        let finished = AsyncStream<Void> { continuation in
            let thread = Thread {
                runLoop.withLockedValue { $0 = UncheckedSendableBox(RunLoop.current) }
                let keepAlive = Timer(timeInterval: 1e9, repeats: true) { _ in }
                RunLoop.current.add(keepAlive, forMode: .default)
                ready.signal()
                while !done.withLockedValue({ $0 }) {
                    _ = RunLoop.current.run(mode: .default, before: .distantFuture)
                    passes.withLockedValue { $0 += 1 }
                }
                keepAlive.invalidate()
                continuation.finish()
            }
            thread.start()
        }
        ready.wait()
        let home = try #require(runLoop.withLockedValue { $0 })
        let mailbox = RunLoopMailbox(runLoop: home.value)
        mailbox.post { done.withLockedValue { $0 = true } }
        for await _ in finished {}
        #expect(passes.withLockedValue { $0 } == 1)
    }
    #endif
}
