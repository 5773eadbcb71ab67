import NIOCore
import TetherTestSupport

/// What a simulated write sends: a record that names itself, so that the peer can tell writes apart whatever order
/// concurrent writes were accepted in: `0xA5`, the write's id and the record's total size (big-endian `UInt32`s),
/// then payload bytes that depend on the id and the position.
enum WriteRecord {
    static let headerSize = 9
    static let marker: UInt8 = 0xA5

    /// 64 KiB of seeded bytes the payloads are cut from.
    static let pattern: [UInt8] = {
        var generator = SeededGenerator(seed: 0x5EED_0F_A5)
        return (0..<65_536).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    }()

    /// The payload byte at `position` (≥ `headerSize`) of write `id`.
    static func byte(id: Int, at position: Int) -> UInt8 {
        pattern[(id &* 7_919 &+ position) & 0xFFFF]
    }

    /// The record of write `id`, `size` (≥ `headerSize`) bytes in all.
    static func make(id: Int, size: Int) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(size)
        buffer.writeInteger(marker)
        buffer.writeInteger(UInt32(id))
        buffer.writeInteger(UInt32(size))
        var position = headerSize
        while position < size {
            let start = (id &* 7_919 &+ position) & 0xFFFF
            let count = min(size - position, 65_536 - start)
            buffer.writeBytes(pattern[start..<start + count])
            position += count
        }
        return buffer
    }

    /// Parses the records a peer receives, checking every byte; keeps the ids in the order they began.
    struct Parser {
        private var header: [UInt8] = []
        private var current: (id: Int, size: Int, position: Int)?
        private(set) var ids: [Int] = []
        private(set) var received = 0
        /// The first problem: a bad header or a wrong byte.
        private(set) var problem: String?
        /// Whether the bytes so far end on a record's boundary.
        var atBoundary: Bool { current == nil && header.isEmpty }

        mutating func feed(_ bytes: UnsafeRawBufferPointer) {
            var index = 0
            while index < bytes.count, problem == nil {
                if var record = current {
                    let count = min(bytes.count - index, record.size - record.position)
                    let start = (record.id &* 7_919 &+ record.position) & 0xFFFF
                    for offset in 0..<count where bytes[index + offset] != Self.patternByte(start, offset) {
                        problem = "write \(record.id): wrong byte at \(record.position + offset) of \(record.size)"
                        break
                    }
                    index += count
                    record.position += count
                    current = record.position == record.size ? nil : record
                } else {
                    header.append(bytes[index])
                    index += 1
                    guard header.count == WriteRecord.headerSize else { continue }
                    let id = header[1...4].reduce(0) { $0 << 8 | Int($1) }
                    let size = header[5...8].reduce(0) { $0 << 8 | Int($1) }
                    if header[0] != WriteRecord.marker || size < WriteRecord.headerSize {
                        problem = "a bad record header \(header) after write \(ids.last ?? -1), at \(received + index)"
                    }
                    header = []
                    ids.append(id)
                    current = size == WriteRecord.headerSize ? nil : (id, size, WriteRecord.headerSize)
                }
            }
            received += bytes.count
        }

        private static func patternByte(_ start: Int, _ offset: Int) -> UInt8 {
            WriteRecord.pattern[(start + offset) & 0xFFFF]
        }
    }
}
