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
}
