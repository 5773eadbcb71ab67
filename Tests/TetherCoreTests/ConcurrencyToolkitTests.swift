import Testing
import TetherConcurrency

/// `LockedBox` and `UncheckedSendableBox` from TetherConcurrency, the package's one lock box and one wrapper.
struct ConcurrencyToolkitTests {
    @Test func concurrentIncrementsFromManyTasksEndAtTheExactTotal() async {
        let box = LockedBox(0)
        let tasks = 64
        let increments = 1_000
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    for _ in 0..<increments {
                        box.withLock { $0 += 1 }
                    }
                }
            }
        }
        #expect(box.withLock { $0 } == tasks * increments)
    }

    @Test func withLockReturnsTheBodysResultAndKeepsItsChanges() {
        let box = LockedBox([1, 2])
        let count = box.withLock { values -> Int in
            values.append(3)
            return values.count
        }
        #expect(count == 3)
        #expect(box.withLock { $0 } == [1, 2, 3])
    }

    @Test func withLockRethrowsAndKeepsChangesMadeBeforeTheThrow() {
        struct Failure: Error {}
        let box = LockedBox("a")
        #expect(throws: Failure.self) {
            try box.withLock { value in
                value += "b"
                throw Failure()
            }
        }
        #expect(box.withLock { $0 } == "ab")
    }

    @Test func uncheckedSendableBoxCarriesTheSameInstanceAcrossATask() async {
        /// A non-Sendable class: only the task below touches it while it is away.
        final class Counter {
            var value = 0
        }
        let counter = Counter()
        // Sendable: the task is the only user of the counter until it is awaited.
        let box = UncheckedSendableBox(counter)
        let identity = await Task.detached {
            box.value.value += 1
            return ObjectIdentifier(box.value)
        }.value
        #expect(identity == ObjectIdentifier(counter))
        #expect(counter.value == 1)
    }

    @Test func concurrentIncrementsThroughTheLockedAccessorEndAtTheExactTotal() async {
        let box = LockedBox(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<64 {
                group.addTask {
                    for _ in 0..<1_000 { box.locked += 1 }
                }
            }
        }
        #expect(box.locked == 64_000)
    }

    @Test func copiesOfABoxShareOneValueWhicheverAccessorReachesIt() {
        let box = LockedBox([1])
        let copy = box
        copy.locked.append(2)
        box.unlocked.append(3)
        copy.withLock { $0.append(4) }
        #expect(box.locked == [1, 2, 3, 4])
        #expect(copy.unlocked == [1, 2, 3, 4])
    }

    @Test func theValueIsReleasedWithTheLastCopyOfTheBox() {
        final class Tracked {}
        weak var tracked: Tracked?
        do {
            let value = Tracked()
            tracked = value
            let box = LockedBox(value)
            let copy = box
            #expect(copy.locked === value)
        }
        #expect(tracked == nil)
    }
}
