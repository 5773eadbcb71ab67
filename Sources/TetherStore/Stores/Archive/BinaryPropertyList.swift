import Foundation

/// A reader and writer of the binary property list format (`bplist00`), including `UID` objects, which Foundation's
/// `PropertyListSerialization` does not expose. Every read is bounds-checked: bad bytes throw, never trap.
enum BinaryPropertyList {
    struct FormatError: Error, CustomStringConvertible {
        var description: String
    }

    /// A shallow object of the object table: containers hold object indices.
    enum RawObject {
        case scalar(PlistValue)
        case array([Int])
        case dictionary(keys: [Int], values: [Int])
    }

    // MARK: - Reading

    struct Reader {
        private let bytes: [UInt8]
        private let offsets: [Int]
        private let refSize: Int
        let topObject: Int

        init(_ data: Data) throws {
            bytes = [UInt8](data)
            guard bytes.count >= 40, bytes[0..<6].elementsEqual("bplist".utf8) else {
                throw FormatError(description: "not a binary property list")
            }
            let trailer = bytes.count - 32
            let offsetSize = Int(bytes[trailer + 6])
            refSize = Int(bytes[trailer + 7])
            let count = Self.uint(bytes, trailer + 8, 8)
            let top = Self.uint(bytes, trailer + 16, 8)
            let tableOffset = Self.uint(bytes, trailer + 24, 8)
            guard (1...8).contains(offsetSize), (1...8).contains(refSize), count > 0, count < UInt64(bytes.count),
                top < count, tableOffset >= 8, tableOffset < UInt64(trailer),
                UInt64(trailer) - tableOffset >= count * UInt64(offsetSize)
            else {
                throw FormatError(description: "the binary property list trailer is damaged")
            }
            var offsets: [Int] = []
            offsets.reserveCapacity(Int(count))
            for index in 0..<Int(count) {
                let offset = Self.uint(bytes, Int(tableOffset) + index * offsetSize, offsetSize)
                guard offset >= 8, offset < tableOffset else {
                    throw FormatError(description: "object \(index) has an offset outside the object area")
                }
                offsets.append(Int(offset))
            }
            self.offsets = offsets
            topObject = Int(top)
        }

        var objectCount: Int { offsets.count }

        func raw(_ index: Int) throws -> RawObject {
            guard index >= 0, index < offsets.count else {
                throw FormatError(description: "reference to object \(index) of \(offsets.count)")
            }
            var position = offsets[index]
            let marker = try byte(at: position)
            position += 1
            let high = marker >> 4
            let low = Int(marker & 0x0F)
            switch high {
            case 0x0:
                switch marker {
                case 0x08: return .scalar(.bool(false))
                case 0x09: return .scalar(.bool(true))
                default: throw FormatError(description: "unsupported object marker \(marker)")
                }
            case 0x1:
                let size = 1 << low
                if size == 16 {
                    let high = try uint(at: position, size: 8)
                    let low = try uint(at: position + 8, size: 8)
                    guard high == 0 else { throw FormatError(description: "integer wider than 64 bits") }
                    return .scalar(low > UInt64(Int64.max) ? .unsignedInteger(low) : .integer(Int64(low)))
                }
                guard size <= 8 else { throw FormatError(description: "integer of \(size) bytes") }
                let value = try uint(at: position, size: size)
                return .scalar(.integer(size == 8 ? Int64(bitPattern: value) : Int64(value)))
            case 0x2:
                return .scalar(.real(try real(at: position, size: 1 << low)))
            case 0x3:
                guard marker == 0x33 else { throw FormatError(description: "unsupported date marker \(marker)") }
                return .scalar(.date(try real(at: position, size: 8)))
            case 0x4:
                let (count, start) = try length(low, position)
                return .scalar(.data(Data(try slice(start, count))))
            case 0x5:
                let (count, start) = try length(low, position)
                let chars = try slice(start, count)
                return .scalar(.string(String(decoding: chars, as: UTF8.self)))
            case 0x6:
                let (count, start) = try length(low, position)
                let raw = try slice(start, count * 2)
                var units: [UInt16] = []
                units.reserveCapacity(count)
                var index = raw.startIndex
                while index < raw.endIndex {
                    units.append(UInt16(raw[index]) << 8 | UInt16(raw[index + 1]))
                    index += 2
                }
                return .scalar(.string(String(decoding: units, as: UTF16.self)))
            case 0x8:
                return .scalar(.uid(try uint(at: position, size: low + 1)))
            case 0xA:
                let (count, start) = try length(low, position)
                return .array(try refs(start, count))
            case 0xD:
                let (count, start) = try length(low, position)
                let keys = try refs(start, count)
                let values = try refs(start + count * refSize, count)
                return .dictionary(keys: keys, values: values)
            default:
                throw FormatError(description: "unsupported object marker \(marker)")
            }
        }

        /// The fully resolved value of an object (no shared-subtree blow-up: at most `budget` nodes).
        func value(_ index: Int) throws -> PlistValue {
            var budget = max(offsets.count * 4, 1024)
            return try value(index, depth: 0, budget: &budget)
        }

        func string(_ index: Int) throws -> String {
            guard case .scalar(.string(let string)) = try raw(index) else {
                throw FormatError(description: "object \(index) is not a string")
            }
            return string
        }

        private func value(_ index: Int, depth: Int, budget: inout Int) throws -> PlistValue {
            budget -= 1
            guard depth < 512, budget >= 0 else {
                throw FormatError(description: "the property list nests too deeply or repeats itself")
            }
            switch try raw(index) {
            case .scalar(let value):
                return value
            case .array(let items):
                return .array(try items.map { try value($0, depth: depth + 1, budget: &budget) })
            case .dictionary(let keys, let values):
                var dictionary: [String: PlistValue] = [:]
                dictionary.reserveCapacity(keys.count)
                for (key, item) in zip(keys, values) {
                    dictionary[try string(key)] = try value(item, depth: depth + 1, budget: &budget)
                }
                return .dictionary(dictionary)
            }
        }

        private func byte(at position: Int) throws -> UInt8 {
            guard position >= 0, position < bytes.count else {
                throw FormatError(description: "object extends past the end")
            }
            return bytes[position]
        }

        private func slice(_ start: Int, _ count: Int) throws -> ArraySlice<UInt8> {
            guard count >= 0, start >= 0, start <= bytes.count, count <= bytes.count - start else {
                throw FormatError(description: "object extends past the end")
            }
            return bytes[start..<(start + count)]
        }

        private func uint(at position: Int, size: Int) throws -> UInt64 {
            guard size >= 1, size <= 8, position >= 0, position <= bytes.count - size else {
                throw FormatError(description: "integer of \(size) bytes at \(position) is out of bounds")
            }
            return Self.uint(bytes, position, size)
        }

        private func real(at position: Int, size: Int) throws -> Double {
            switch size {
            case 4: return Double(Float(bitPattern: UInt32(try uint(at: position, size: 4))))
            case 8: return Double(bitPattern: try uint(at: position, size: 8))
            default: throw FormatError(description: "real of \(size) bytes")
            }
        }

        private func length(_ low: Int, _ position: Int) throws -> (Int, Int) {
            if low < 0x0F { return (low, position) }
            let marker = try byte(at: position)
            guard marker >> 4 == 0x1, marker & 0x0F <= 3 else {
                throw FormatError(description: "bad length marker \(marker)")
            }
            let size = 1 << Int(marker & 0x0F)
            let value = try uint(at: position + 1, size: size)
            guard value < UInt64(bytes.count) else { throw FormatError(description: "length \(value) too large") }
            return (Int(value), position + 1 + size)
        }

        private func refs(_ start: Int, _ count: Int) throws -> [Int] {
            guard count <= bytes.count / refSize else { throw FormatError(description: "too many references") }
            _ = try slice(start, count * refSize)
            return (0..<count).map { Int(Self.uint(bytes, start + $0 * refSize, refSize)) }
        }

        private static func uint(_ bytes: [UInt8], _ position: Int, _ size: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in 0..<size {
                value = value << 8 | UInt64(bytes[position + index])
            }
            return value
        }
    }

    /// Parses a whole binary property list.
    static func read(_ data: Data) throws -> PlistValue {
        let reader = try Reader(data)
        return try reader.value(reader.topObject)
    }

    // MARK: - Writing

    /// Writes `value` as a binary property list; equal strings are stored once.
    static func write(_ value: PlistValue) -> Data {
        var writer = Writer()
        let top = writer.flatten(value)
        return writer.encode(top: top)
    }

    /// Builds a binary property list object by object (for writers that know their object graph, like the keyed
    /// archiver); equal strings and UIDs are stored once.
    struct Writer {
        enum Flat {
            case scalar(PlistValue)
            case array([Int])
            case dictionary([Int], [Int])
        }

        var objects: [Flat] = []
        var strings: [String: Int] = [:]
        var uids: [UInt64: Int] = [:]

        /// A string object (stored once per distinct string).
        mutating func string(_ string: String) -> Int {
            flatten(.string(string))
        }

        /// A UID object (stored once per distinct value).
        mutating func uid(_ uid: UInt64) -> Int {
            flatten(.uid(uid))
        }

        /// A scalar object, or a container flattened recursively.
        mutating func value(_ value: PlistValue) -> Int {
            flatten(value)
        }

        /// An array of objects already added.
        mutating func array(_ references: [Int]) -> Int {
            objects.append(.array(references))
            return objects.count - 1
        }

        /// A dictionary of objects already added.
        mutating func dictionary(keys: [Int], values: [Int]) -> Int {
            objects.append(.dictionary(keys, values))
            return objects.count - 1
        }

        mutating func flatten(_ value: PlistValue) -> Int {
            switch value {
            case .string(let string):
                if let index = strings[string] { return index }
                objects.append(.scalar(value))
                strings[string] = objects.count - 1
                return objects.count - 1
            case .uid(let uid):
                if let index = uids[uid] { return index }
                objects.append(.scalar(value))
                uids[uid] = objects.count - 1
                return objects.count - 1
            case .array(let items):
                let index = objects.count
                objects.append(.array([]))
                let refs = items.map { flatten($0) }
                objects[index] = .array(refs)
                return index
            case .dictionary(let dictionary):
                let index = objects.count
                objects.append(.dictionary([], []))
                var keys: [Int] = []
                var values: [Int] = []
                keys.reserveCapacity(dictionary.count)
                values.reserveCapacity(dictionary.count)
                for (key, value) in dictionary {
                    keys.append(flatten(.string(key)))
                    values.append(flatten(value))
                }
                objects[index] = .dictionary(keys, values)
                return index
            default:
                objects.append(.scalar(value))
                return objects.count - 1
            }
        }

        func encode(top: Int) -> Data {
            let refSize = Self.size(for: UInt64(objects.count))
            var out: [UInt8] = Array("bplist00".utf8)
            var offsets: [Int] = []
            offsets.reserveCapacity(objects.count)
            for object in objects {
                offsets.append(out.count)
                switch object {
                case .scalar(let value):
                    Self.append(value, to: &out)
                case .array(let refs):
                    Self.appendMarker(0xA, refs.count, to: &out)
                    for ref in refs { Self.append(UInt64(ref), size: refSize, to: &out) }
                case .dictionary(let keys, let values):
                    Self.appendMarker(0xD, keys.count, to: &out)
                    for ref in keys { Self.append(UInt64(ref), size: refSize, to: &out) }
                    for ref in values { Self.append(UInt64(ref), size: refSize, to: &out) }
                }
            }
            let tableOffset = out.count
            let offsetSize = Self.size(for: UInt64(tableOffset))
            for offset in offsets { Self.append(UInt64(offset), size: offsetSize, to: &out) }
            out.append(contentsOf: [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(refSize)])
            Self.append(UInt64(objects.count), size: 8, to: &out)
            Self.append(UInt64(top), size: 8, to: &out)
            Self.append(UInt64(tableOffset), size: 8, to: &out)
            return Data(out)
        }

        static func size(for value: UInt64) -> Int {
            if value <= 0xFF { return 1 }
            if value <= 0xFFFF { return 2 }
            if value <= 0xFFFF_FFFF { return 4 }
            return 8
        }

        static func append(_ value: UInt64, size: Int, to out: inout [UInt8]) {
            var shift = UInt64(size - 1) * 8
            while true {
                out.append(UInt8(truncatingIfNeeded: value >> shift))
                if shift == 0 { break }
                shift -= 8
            }
        }

        static func appendInteger(_ value: UInt64, to out: inout [UInt8]) {
            let size = size(for: value)
            out.append(0x10 | UInt8(size.trailingZeroBitCount))
            append(value, size: size, to: &out)
        }

        static func appendMarker(_ kind: UInt8, _ count: Int, to out: inout [UInt8]) {
            if count < 15 {
                out.append(kind << 4 | UInt8(count))
            } else {
                out.append(kind << 4 | 0x0F)
                appendInteger(UInt64(count), to: &out)
            }
        }

        static func append(_ value: PlistValue, to out: inout [UInt8]) {
            switch value {
            case .string(let string):
                if string.utf8.allSatisfy({ $0 < 0x80 }) {
                    appendMarker(0x5, string.utf8.count, to: &out)
                    out.append(contentsOf: string.utf8)
                } else {
                    let units = Array(string.utf16)
                    appendMarker(0x6, units.count, to: &out)
                    for unit in units {
                        out.append(UInt8(unit >> 8))
                        out.append(UInt8(unit & 0xFF))
                    }
                }
            case .integer(let integer):
                if integer < 0 {
                    out.append(0x13)
                    append(UInt64(bitPattern: integer), size: 8, to: &out)
                } else {
                    appendInteger(UInt64(integer), to: &out)
                }
            case .unsignedInteger(let integer):
                out.append(0x14)
                append(0, size: 8, to: &out)
                append(integer, size: 8, to: &out)
            case .real(let real):
                out.append(0x23)
                append(real.bitPattern, size: 8, to: &out)
            case .bool(let bool):
                out.append(bool ? 0x09 : 0x08)
            case .date(let seconds):
                out.append(0x33)
                append(seconds.bitPattern, size: 8, to: &out)
            case .data(let data):
                appendMarker(0x4, data.count, to: &out)
                out.append(contentsOf: data)
            case .uid(let uid):
                let size = size(for: uid)
                out.append(0x80 | UInt8(size - 1))
                append(uid, size: size, to: &out)
            case .array, .dictionary:
                preconditionFailure("containers are flattened before encoding")
            }
        }
    }
}
