import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import TetherSockets

@Suite("RunLoopMailbox: callbacks on one run loop, in its modes, in order", .timeLimit(.minutes(1)))
struct RunLoopMailboxTests {
    @Test("callbacks posted from other threads run on the run loop's thread, in the order posted")
    func postedCallbacksRunInOrderOnTheRunLoop() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let mailbox = RunLoopMailbox(runLoop: home.runLoop)
        let seen = NIOLockedValueBox<[Int]>([])
        let wrongThread = NIOLockedValueBox(false)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let finish = NIOLockedValueBox<CheckedContinuation<Void, Never>?>(done)
            DispatchQueue.concurrentPerform(iterations: 1) { _ in
                for value in 0..<500 {
                    mailbox.post {
                        if RunLoop.current !== home.runLoop { wrongThread.withLockedValue { $0 = true } }
                        seen.withLockedValue { $0.append(value) }
                        if value == 499 {
                            finish.withLockedValue {
                                $0?.resume()
                                $0 = nil
                            }
                        }
                    }
                }
            }
        }
        #expect(seen.withLockedValue { $0 } == Array(0..<500))
        #expect(!wrongThread.withLockedValue { $0 })
    }

    @Test("nothing runs while the run loop runs in a mode the mailbox does not use; all of it runs once it does")
    func callbacksWaitForTheirMode() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let custom = RunLoop.Mode("TetherTestMode")
        home.mode = custom
        // Wait until the thread has entered the custom mode: a callback posted in that mode runs there.
        let probe = RunLoopMailbox(runLoop: home.runLoop, modes: [custom])
        await withCheckedContinuation { (entered: CheckedContinuation<Void, Never>) in
            probe.post { entered.resume() }
        }
        let mailbox = RunLoopMailbox(runLoop: home.runLoop, modes: [.default])
        let ran = NIOLockedValueBox(false)
        mailbox.post { ran.withLockedValue { $0 = true } }
        // A callback in the custom mode, posted after, runs; the default-mode one still has not.
        await withCheckedContinuation { (later: CheckedContinuation<Void, Never>) in
            probe.post { later.resume() }
        }
        await withCheckedContinuation { (later: CheckedContinuation<Void, Never>) in
            probe.post { later.resume() }
        }
        #expect(!ran.withLockedValue { $0 })
        home.mode = .default
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            mailbox.post { done.resume() }
        }
        #expect(ran.withLockedValue { $0 })
    }

    @Test("a mailbox without a run loop keeps its callbacks until it is given one")
    func heldUntilARunLoopIsGiven() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let mailbox = RunLoopMailbox(runLoop: nil)
        let seen = NIOLockedValueBox<[Int]>([])
        mailbox.post { seen.withLockedValue { $0.append(1) } }
        mailbox.post { seen.withLockedValue { $0.append(2) } }
        #expect(seen.withLockedValue { $0 }.isEmpty)
        mailbox.move(to: home.runLoop)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            mailbox.post { done.resume() }
        }
        #expect(seen.withLockedValue { $0 } == [1, 2])
    }

    @Test("after a move, earlier callbacks ran on the old run loop and later ones run on the new")
    func moveSendsLaterCallbacksToTheNewRunLoop() async throws {
        let old = RunLoopThread(name: "old")
        let new = RunLoopThread(name: "new")
        defer {
            old.stop()
            new.stop()
        }
        let mailbox = RunLoopMailbox(runLoop: old.runLoop)
        let places = NIOLockedValueBox<[String]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            mailbox.post {
                places.withLockedValue { $0.append(RunLoop.current === old.runLoop ? "old" : "?") }
                mailbox.move(to: new.runLoop)
                mailbox.post {
                    places.withLockedValue { $0.append(RunLoop.current === new.runLoop ? "new" : "?") }
                    done.resume()
                }
            }
        }
        #expect(places.withLockedValue { $0 } == ["old", "new"])
    }

    @Test("a change of modes while a batch waits in the old modes: it and every later callback run in the new modes")
    func aModeChangeTakesTheScheduledBatchAlong() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let custom = RunLoop.Mode("TetherTestModeChange")
        home.mode = custom
        let probe = RunLoopMailbox(runLoop: home.runLoop, modes: [custom])
        await withCheckedContinuation { (entered: CheckedContinuation<Void, Never>) in
            probe.post { entered.resume() }
        }
        // The thread runs in the custom mode only: a batch handed over in the default mode waits.
        let mailbox = RunLoopMailbox(runLoop: home.runLoop, modes: [.default])
        let seen = NIOLockedValueBox<[Int]>([])
        mailbox.post { seen.withLockedValue { $0.append(1) } }
        mailbox.post { seen.withLockedValue { $0.append(2) } }
        mailbox.modes = [custom]
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            mailbox.post {
                seen.withLockedValue { $0.append(3) }
                done.resume()
            }
        }
        #expect(seen.withLockedValue { $0 } == [1, 2, 3])
    }

    @Test("a move inside a callback: the rest of the batch runs on the new run loop, in order, after it returns")
    func aMoveInsideACallbackTakesTheRestOfTheBatch() async throws {
        let old = RunLoopThread(name: "old")
        let new = RunLoopThread(name: "new")
        defer {
            old.stop()
            new.stop()
        }
        // The old thread waits at a gate while three callbacks are posted: they form one batch.
        let gate = DispatchSemaphore(value: 0)
        old.perform { gate.wait() }
        let mailbox = RunLoopMailbox(runLoop: old.runLoop)
        let places = NIOLockedValueBox<[String]>([])
        let firstReturned = NIOLockedValueBox(false)
        let overlapped = NIOLockedValueBox(false)
        let secondStarted = DispatchSemaphore(value: 0)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            mailbox.post {
                places.withLockedValue { $0.append(RunLoop.current === old.runLoop ? "old" : "?") }
                mailbox.move(to: new.runLoop)
                // The next callback must not start on the new thread while this one runs: give it the chance.
                if secondStarted.wait(timeout: .now() + .milliseconds(200)) == .success {
                    overlapped.withLockedValue { $0 = true }
                }
                firstReturned.withLockedValue { $0 = true }
            }
            for index in 2...3 {
                mailbox.post {
                    if index == 2 { secondStarted.signal() }
                    if !firstReturned.withLockedValue({ $0 }) { overlapped.withLockedValue { $0 = true } }
                    places.withLockedValue {
                        $0.append(RunLoop.current === new.runLoop ? "new\(index)" : "old\(index)")
                    }
                    if index == 3 { done.resume() }
                }
            }
            gate.signal()
        }
        #expect(places.withLockedValue { $0 } == ["old", "new2", "new3"])
        #expect(!overlapped.withLockedValue { $0 })
    }
}
