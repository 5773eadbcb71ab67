import NIOCore
import Testing

@testable import TetherSockets

/// The receive buffer keeps large socket reads whole behind its front and joins them only when asked; small reads
/// are joined at once.
struct ReceiveBufferTests {
    /// A read of `count` bytes of `byte`, as NIO would hand it over.
    private func read(_ count: Int, of byte: UInt8) -> ByteBuffer {
        ByteBuffer(repeating: byte, count: count)
    }

    /// The address of `buffer`'s first readable byte: equal addresses mean the same storage, no copy.
    private func address(_ buffer: ByteBuffer) -> UInt {
        buffer.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
    }

    private var large: Int { ReceiveBuffer.joinedBelow }

    @Test func theFirstReadIntoAnEmptyBufferIsAdoptedAsTheFront() {
        var buffer = ReceiveBuffer()
        let first = read(large, of: 1)
        buffer.append(first)
        #expect(address(buffer.front) == address(first))
        #expect(!buffer.hasBytesBehind)
        #expect(buffer.readableBytes == large)
    }

    @Test func smallReadsAreJoinedToTheFrontAtOnce() {
        var buffer = ReceiveBuffer()
        buffer.append(ByteBuffer(string: "ab"))
        buffer.append(ByteBuffer(string: "cd"))
        #expect(String(buffer: buffer.front) == "abcd")
        #expect(!buffer.hasBytesBehind)
    }

    @Test func largeReadsWaitBehindTheFrontUnjoinedAndAreCounted() {
        var buffer = ReceiveBuffer()
        buffer.append(ByteBuffer(string: "ab"))
        buffer.append(read(large, of: 2))
        buffer.append(read(large + 1, of: 3))
        #expect(String(buffer: buffer.front) == "ab")
        #expect(buffer.hasBytesBehind)
        #expect(buffer.readableBytes == 2 + large + large + 1)
    }

    @Test func aSmallReadAfterALargeOneJoinsTheLastReadBehindTheFront() {
        var buffer = ReceiveBuffer()
        buffer.append(ByteBuffer(string: "ab"))
        buffer.append(read(large, of: 2))
        buffer.append(ByteBuffer(string: "z"))
        #expect(buffer.readableBytes == 2 + large + 1)
        let joined = buffer.joinNext()
        #expect(joined)
        #expect(!buffer.hasBytesBehind)
        #expect(buffer.front.readableBytes == 2 + large + 1)
        #expect(buffer.front.getInteger(at: buffer.front.writerIndex - 1, as: UInt8.self) == UInt8(ascii: "z"))
    }

    @Test func joiningIntoAnEmptyFrontAdoptsTheReadWithoutACopy() {
        var buffer = ReceiveBuffer()
        buffer.append(read(large, of: 1))
        let second = read(large, of: 2)
        buffer.append(second)
        _ = buffer.readFront(large)
        #expect(buffer.front.readableBytes == 0)
        let adopted = buffer.joinNext()
        #expect(adopted)
        #expect(address(buffer.front) == address(second))
        let more = buffer.joinNext()
        #expect(!more)
    }

    @Test func joiningIntoAFrontWithBytesAppendsInOrder() {
        var buffer = ReceiveBuffer()
        buffer.append(read(large, of: 1))
        buffer.append(read(large, of: 2))
        buffer.append(read(large, of: 3))
        buffer.joinAll()
        #expect(!buffer.hasBytesBehind)
        let bytes = buffer.front.getBytes(at: buffer.front.readerIndex, length: 3 * large)!
        #expect(
            bytes == Array(repeating: 1, count: large) + Array(repeating: 2, count: large)
                + Array(repeating: 3, count: large)
        )
    }

    @Test func aLimitedJoinCopiesOnlyWhatIsAskedAndLeavesTheRestUncopiedBehind() {
        var buffer = ReceiveBuffer()
        buffer.append(ByteBuffer(string: "abc"))
        var second = ByteBuffer(string: "def")
        second.writeRepeatingByte(7, count: large)
        buffer.append(second)
        let joined = buffer.joinNext(atMost: 3)
        #expect(joined)
        #expect(String(buffer: buffer.front) == "abcdef")
        #expect(buffer.readableBytes == 6 + large)
        _ = buffer.readFront(6)
        let adopted = buffer.joinNext()
        #expect(adopted)
        #expect(buffer.front.readableBytes == large)
        #expect(address(buffer.front) == address(second) + 3)
    }

    @Test func aFrontReadToItsEndLetsGoOfTheSocketReadsStorage() {
        var buffer = ReceiveBuffer()
        buffer.append(read(large, of: 1))
        _ = buffer.readFront(large - 1)
        #expect(buffer.front.capacity >= large)  // a byte left: the storage stays
        _ = buffer.readFront(1)
        #expect(buffer.front.capacity == 0)  // NIO's pooled allocator may read into it again
        #expect(buffer.readableBytes == 0)
    }

    @Test func takeAllReturnsEveryByteJoinedAndEmpties() {
        var buffer = ReceiveBuffer()
        buffer.append(ByteBuffer(string: "ab"))
        buffer.append(read(large, of: 2))
        let all = buffer.takeAll()
        #expect(all.readableBytes == 2 + large)
        #expect(all.getString(at: all.readerIndex, length: 2) == "ab")
        #expect(buffer.readableBytes == 0)
        #expect(!buffer.hasBytesBehind)
    }

    @Test func prependPutsBytesBeforeTheFrontAndKeepsTheReadsBehind() {
        var buffer = ReceiveBuffer()
        buffer.append(ByteBuffer(string: "cd"))
        buffer.append(read(large, of: 9))
        buffer.prepend(ByteBuffer(string: "ab"))
        #expect(String(buffer: buffer.front) == "abcd")
        #expect(buffer.readableBytes == 4 + large)
    }

    @Test func anEmptyReadChangesNothing() {
        var buffer = ReceiveBuffer()
        buffer.append(ByteBuffer())
        #expect(buffer.readableBytes == 0)
        buffer.append(ByteBuffer(string: "a"))
        buffer.append(ByteBuffer())
        #expect(String(buffer: buffer.front) == "a")
        #expect(!buffer.hasBytesBehind)
    }

    // MARK: a front readers were given slices of

    /// The range of `buffer`'s whole storage, by address.
    private func storage(_ buffer: ByteBuffer) -> Range<UInt> {
        buffer.withVeryUnsafeBytes {
            let base = UInt(bitPattern: $0.baseAddress)
            return base..<base + UInt($0.count)
        }
    }

    /// A read of `count` bytes in storage of `capacity` (no other reference to it is kept).
    private func reserved(_ capacity: Int, holding count: Int) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: capacity)
        buffer.writeRepeatingByte(1, count: count)
        return buffer
    }

    @Test func aSliceReadFromTheFrontLendsItAndReadingToTheEndOrAdoptingEndsTheLoan() {
        var buffer = ReceiveBuffer()
        buffer.append(read(large, of: 1))
        #expect(!buffer.frontIsLent)
        _ = buffer.readFront(10)
        #expect(buffer.frontIsLent)
        _ = buffer.readFront(large - 10)
        #expect(!buffer.frontIsLent)
        buffer.append(read(large, of: 2))
        _ = buffer.takeAll()
        #expect(!buffer.frontIsLent)
    }

    @Test func aLentFrontThatMustGrowIsCopiedIntoFreshStorageNotMovedInPlace() {
        var buffer = ReceiveBuffer()
        buffer.append(read(large, of: 1))
        buffer.append(read(large, of: 2))
        let lentStorage = storage(buffer.front)
        #expect(buffer.front.writableBytes < large)  // the next read does not fit: the front must grow
        // The reader takes its slice and lets go of it: the storage is the front's alone again.
        #expect(buffer.readFront(10).readableBytes == 10)
        let joined = buffer.joinNext()
        #expect(joined)
        #expect(!lentStorage.contains(address(buffer.front)))
        #expect(!buffer.frontIsLent)
        let bytes = buffer.front.getBytes(at: buffer.front.readerIndex, length: 2 * large - 10)!
        #expect(bytes == Array(repeating: 1, count: large - 10) + Array(repeating: 2, count: large))
    }

    @Test func aLentFrontDropsNoConsumedBytesInPlace() {
        var buffer = ReceiveBuffer()
        buffer.append(reserved(4 * large, holding: 3 * large))
        let lentStorage = storage(buffer.front)
        // Past half the storage consumed, joining would first drop those bytes, over what the reader was given.
        #expect(buffer.readFront(2 * large + 1).readableBytes == 2 * large + 1)
        buffer.append(ByteBuffer(string: "z"))
        #expect(!lentStorage.contains(address(buffer.front)))
        #expect(buffer.front.readableBytes == large)
        #expect(buffer.front.getInteger(at: buffer.front.writerIndex - 1, as: UInt8.self) == UInt8(ascii: "z"))
    }

    @Test func bytesThatFitAreAppendedToALentFrontInPlacePastWhatWasLent() {
        var buffer = ReceiveBuffer()
        buffer.append(reserved(4 * large, holding: large))
        let before = address(buffer.front)
        _ = buffer.readFront(10)
        buffer.append(ByteBuffer(string: "z"))
        #expect(address(buffer.front) == before + 10)
        #expect(buffer.frontIsLent)
        #expect(buffer.front.readableBytes == large - 10 + 1)
    }
}
