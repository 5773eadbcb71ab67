import Foundation

/// The layout of `<store>.journal`: a header naming the store file it extends, then one checksummed entry per change.
///
/// Header (20 bytes): `"TTJ1"`, store file length (UInt64 LE), store file CRC-32, header CRC-32 (of the first 16 bytes).
/// Entry: payload length (UInt32 LE), its complement (UInt32 LE, so a damaged length is recognised), CRC-32 of
/// kind + payload (UInt32 LE), kind (1 = put, 2 = delete), payload.
enum Journal {
    static let magic: [UInt8] = Array("TTJ1".utf8)
    static let headerSize = 20
    static let entryHeaderSize = 13

    enum Kind: UInt8 {
        case put = 1
        case delete = 2
    }

    struct Base: Equatable {
        var length: UInt64
        var checksum: UInt32

        init(of data: Data) {
            length = UInt64(data.count)
            checksum = data.withUnsafeBytes { CRC32.checksum($0) }
        }

        init(length: UInt64, checksum: UInt32) {
            self.length = length
            self.checksum = checksum
        }
    }

    struct Entry {
        var kind: Kind
        var payload: Data
    }

    enum HeaderResult {
        /// Shorter than a header: a journal restart cut short; it holds nothing.
        case torn
        case valid(Base)
    }

    /// Outcome of reading a journal's entries.
    struct Contents {
        var entries: [Entry]
        /// The length of the valid prefix (a torn last entry is beyond it).
        var validLength: Int
    }

    static func header(for base: Base) -> [UInt8] {
        var bytes = magic
        append(base.length, to: &bytes)
        append(base.checksum, to: &bytes)
        append(CRC32.checksum(bytes), to: &bytes)
        return bytes
    }

    static func entry(_ kind: Kind, _ payload: Data) -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entryHeaderSize + payload.count)
        append(UInt32(payload.count), to: &bytes)
        append(~UInt32(payload.count), to: &bytes)
        var crc = CRC32.checksum([kind.rawValue])
        crc = payload.withUnsafeBytes { CRC32.checksum($0, continuing: crc) }
        append(crc, to: &bytes)
        bytes.append(kind.rawValue)
        var data = Data(bytes)
        data.append(payload)
        return data
    }

    /// Reads the header; throws `.corruptData` for a complete header that is not valid.
    static func readHeader(_ data: Data, url: URL) throws -> HeaderResult {
        let bytes = [UInt8](data.prefix(headerSize))
        if bytes.count < headerSize {
            return .torn
        }
        guard Array(bytes[0..<4]) == magic, CRC32.checksum(bytes[0..<16]) == load32(bytes, 16) else {
            throw StoreError(code: .corruptData, message: "the journal header is damaged", url: url)
        }
        return .valid(Base(length: load64(bytes, 4), checksum: load32(bytes, 12)))
    }

    /// Reads the entries after the header. A torn or failing last entry (never acknowledged) ends the journal;
    /// damage followed by more data is `.corruptData`.
    static func readEntries(_ data: Data, url: URL) throws -> Contents {
        let bytes = [UInt8](data)
        var offset = headerSize
        var entries: [Entry] = []
        while offset < bytes.count {
            let remaining = bytes.count - offset
            if remaining < entryHeaderSize {
                return Contents(entries: entries, validLength: offset)
            }
            let length = Int(load32(bytes, offset))
            guard load32(bytes, offset + 4) == ~UInt32(length) else {
                // An entry header that does not check out is the torn last entry only if nothing but zeros (blocks
                // allocated but never written) follows; anywhere else it is damage.
                if bytes[offset...].allSatisfy({ $0 == 0 }) {
                    return Contents(entries: entries, validLength: offset)
                }
                throw damaged(entries.count, offset, url)
            }
            let end = offset + entryHeaderSize + length
            if length > remaining - entryHeaderSize {
                // The last entry was being appended when the process or machine stopped: never acknowledged.
                return Contents(entries: entries, validLength: offset)
            }
            let crc = load32(bytes, offset + 8)
            let body = bytes[(offset + 12)..<end]
            guard CRC32.checksum(body) == crc, let kind = Kind(rawValue: bytes[offset + 12]) else {
                if end == bytes.count || bytes[offset...].allSatisfy({ $0 == 0 }) {
                    return Contents(entries: entries, validLength: offset)
                }
                throw damaged(entries.count, offset, url)
            }
            entries.append(Entry(kind: kind, payload: Data(bytes[(offset + 13)..<end])))
            offset = end
        }
        return Contents(entries: entries, validLength: offset)
    }

    private static func damaged(_ index: Int, _ offset: Int, _ url: URL) -> StoreError {
        StoreError(code: .corruptData, message: "journal entry \(index + 1) at byte \(offset) is damaged", url: url)
    }

    private static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private static func load32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        var value: UInt32 = 0
        for index in 0..<4 { value |= UInt32(bytes[offset + index]) << (8 * index) }
        return value
    }

    private static func load64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * index) }
        return value
    }
}
