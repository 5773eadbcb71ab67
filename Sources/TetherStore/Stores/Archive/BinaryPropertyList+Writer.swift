import Foundation

extension BinaryPropertyList {
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
