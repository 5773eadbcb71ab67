/// One connection's (or one receiver's) account of numbered messages: each arrival is the next expected one, a
/// duplicate, a late (reordered) one that fills a gap, or a jump that opens a gap; gaps still open at the end are
/// lost. Corrupted messages (bad CRC, wrong connection, changed bytes) are counted apart.
struct SequenceTally {
    var next: UInt64 = 0
    var received = 0
    var duplicated = 0
    var reordered = 0
    var corrupted = 0
    /// Sequence numbers skipped and not (yet) seen; bounded so that a broken stream cannot exhaust memory.
    private(set) var gaps: Set<UInt64> = []
    private(set) var gapOverflow = 0

    var lost: Int { gaps.count + gapOverflow }

    mutating func record(_ sequence: UInt64) {
        received += 1
        if sequence == next {
            next += 1
        } else if sequence > next {
            for missing in next..<sequence {
                if gaps.count < 4096 { gaps.insert(missing) } else { gapOverflow += 1 }
            }
            next = sequence + 1
        } else if gaps.remove(sequence) != nil {
            reordered += 1
        } else {
            duplicated += 1
        }
    }

    /// Adds another tally's counts (gaps are counted, not merged: they belong to different sequences).
    mutating func add(_ other: SequenceTally) {
        received += other.received
        duplicated += other.duplicated
        reordered += other.reordered
        corrupted += other.corrupted
        gapOverflow += other.lost
    }
}
