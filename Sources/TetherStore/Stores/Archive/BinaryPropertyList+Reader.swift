import Foundation

extension BinaryPropertyList {
    /// Reads the objects of a binary property list by index, every read bounds-checked.
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
}
