import Testing

@testable import TetherReachability

struct ChangeCoalescerTests {
    let start = ContinuousClock.now

    @Test func nothingIsDueWithoutChanges() {
        let coalescer = ChangeCoalescer()
        #expect(coalescer.deadline == nil)
        #expect(!coalescer.isDue(at: start + .seconds(60)))
    }

    @Test func aBurstIsEvaluatedOnceQuietFor100Milliseconds() {
        var coalescer = ChangeCoalescer()
        for step in 0..<5 {
            coalescer.noteChange(at: start + .milliseconds(10 * step))
        }
        #expect(coalescer.deadline == start + .milliseconds(140))
        #expect(!coalescer.isDue(at: start + .milliseconds(139)))
        #expect(coalescer.isDue(at: start + .milliseconds(140)))
        coalescer.reset()
        #expect(coalescer.deadline == nil)
    }

    @Test func anEndlessStreamOfChangesIsStillEvaluatedWithinASecond() {
        var coalescer = ChangeCoalescer()
        for step in 0..<200 {
            coalescer.noteChange(at: start + .milliseconds(50 * step))
        }
        #expect(coalescer.deadline == start + .seconds(1))
    }
}
