import Foundation

/// Reads and writes the `NSKeyedArchiver` layout (`$archiver`, `$version`, `$top`, `$objects` with `UID`
/// references) for property-list values only: `NSArray`, `NSDictionary`, `NSString`, `NSNumber`, `NSDate`, `NSData`.
///
/// Tether does not go through `NSKeyedArchiver`/`NSKeyedUnarchiver`: on Linux they are quadratic on dictionaries and
/// kill the process on a class outside the allow-list. Here any other class is a thrown error naming it.
enum KeyedArchive {
    struct ArchiveError: Error, CustomStringConvertible {
        var description: String
    }

    private static let allowedClasses: Set<String> = [
        "NSArray", "NSMutableArray", "NSDictionary", "NSMutableDictionary", "NSString", "NSMutableString",
        "NSDate", "NSData", "NSMutableData",
    ]

    // MARK: - Writing

    /// An archive whose `rootKey` holds `root` (an array or dictionary of property-list values).
    static func archive(_ root: PlistValue, rootKey: String) -> Data {
        var builder = Builder()
        let rootUID = builder.add(root)
        var writer = builder.writer
        let objects = writer.array(builder.objects)
        let topKey = writer.string(rootKey)
        let top = writer.dictionary(keys: [topKey], values: [writer.uid(rootUID)])
        let keys = ["$archiver", "$objects", "$top", "$version"].map { writer.string($0) }
        let values = [writer.string("NSKeyedArchiver"), objects, top, writer.value(.integer(100_000))]
        let document = writer.dictionary(keys: keys, values: values)
        return writer.encode(top: document)
    }

    /// Lays out `$objects` straight into a binary property list writer: `objects[uid]` is the index of the
    /// property-list object that archive UID `uid` names.
    private struct Builder {
        var writer = BinaryPropertyList.Writer()
        var objects: [Int] = []
        var strings: [String: UInt64] = [:]
        var classes: [String: UInt64] = [:]

        init() {
            objects.append(writer.string("$null"))
        }

        mutating func add(_ value: PlistValue) -> UInt64 {
            switch value {
            case .string(let string):
                if let uid = strings[string] { return uid }
                let uid = append(writer.string(string))
                strings[string] = uid
                return uid
            case .integer, .unsignedInteger, .real, .bool, .data:
                return append(writer.value(value))
            case .uid(let uid):
                return append(writer.value(.integer(Int64(truncatingIfNeeded: uid))))
            case .date(let seconds):
                let uid = reserve()
                let classUID = classReference("NSDate")
                set(uid, ["$class": writer.uid(classUID), "NS.time": writer.value(.real(seconds))])
                return uid
            case .array(let items):
                let uid = reserve()
                let references = items.map { writer.uid(add($0)) }
                let classUID = classReference("NSArray")
                set(uid, ["$class": writer.uid(classUID), "NS.objects": writer.array(references)])
                return uid
            case .dictionary(let dictionary):
                let uid = reserve()
                var keys: [Int] = []
                var values: [Int] = []
                keys.reserveCapacity(dictionary.count)
                values.reserveCapacity(dictionary.count)
                for (key, value) in dictionary {
                    keys.append(writer.uid(add(.string(key))))
                    values.append(writer.uid(add(value)))
                }
                let classUID = classReference("NSDictionary")
                set(
                    uid,
                    [
                        "$class": writer.uid(classUID), "NS.keys": writer.array(keys),
                        "NS.objects": writer.array(values),
                    ]
                )
                return uid
            }
        }

        private mutating func set(_ uid: UInt64, _ fields: KeyValuePairs<String, Int>) {
            let keys = fields.map { writer.string($0.key) }
            objects[Int(uid)] = writer.dictionary(keys: keys, values: fields.map(\.value))
        }

        private mutating func reserve() -> UInt64 {
            objects.append(0)
            return UInt64(objects.count - 1)
        }

        private mutating func append(_ object: Int) -> UInt64 {
            objects.append(object)
            return UInt64(objects.count - 1)
        }

        private mutating func classReference(_ name: String) -> UInt64 {
            if let uid = classes[name] { return uid }
            let classes = writer.array([writer.string(name), writer.string("NSObject")])
            let description = writer.dictionary(
                keys: [writer.string("$classname"), writer.string("$classes")],
                values: [writer.string(name), classes]
            )
            let uid = append(description)
            self.classes[name] = uid
            return uid
        }
    }

    // MARK: - Reading

    /// The value under `rootKey` of an archive.
    /// - Throws: `ArchiveError` for anything but a keyed archive of property-list classes with that root key.
    static func unarchive(_ data: Data, rootKey: String) throws -> PlistValue {
        let reader = try BinaryPropertyList.Reader(data)
        guard case .dictionary(let keys, let values) = try reader.raw(reader.topObject) else {
            throw ArchiveError(description: "the archive's top level is not a dictionary")
        }
        var top: [String: Int] = [:]
        for (key, value) in zip(keys, values) {
            top[try reader.string(key)] = value
        }
        if let archiver = top["$archiver"] {
            let name = try reader.string(archiver)
            guard name == "NSKeyedArchiver" else {
                throw ArchiveError(description: "the archive was written by \(name), not NSKeyedArchiver")
            }
        }
        guard let objectsIndex = top["$objects"], case .array(let objects) = try reader.raw(objectsIndex),
            let topIndex = top["$top"], case .dictionary(let topKeys, let topValues) = try reader.raw(topIndex)
        else {
            throw ArchiveError(description: "not a keyed archive ($objects or $top missing)")
        }
        var rootReference: Int?
        var foundKeys: [String] = []
        for (key, value) in zip(topKeys, topValues) {
            let name = try reader.string(key)
            foundKeys.append(name)
            if name == rootKey { rootReference = value }
        }
        guard let rootReference else {
            throw ArchiveError(
                description: "the archive has no root key \"\(rootKey)\" (it has \(foundKeys.sorted()))"
            )
        }
        var decoder = Decoder(reader: reader, objects: objects, budget: max(objects.count * 4, 1024))
        return try decoder.decode(reference: rootReference, depth: 0)
    }

    private struct Decoder {
        let reader: BinaryPropertyList.Reader
        let objects: [Int]
        var budget: Int
        /// Field names and class names repeat in every object: read each once.
        var keyNames: [Int: String] = [:]
        var classNames: [Int: String] = [:]

        init(reader: BinaryPropertyList.Reader, objects: [Int], budget: Int) {
            self.reader = reader
            self.objects = objects
            self.budget = budget
        }

        private mutating func keyName(_ index: Int) throws -> String {
            if let name = keyNames[index] { return name }
            let name = try reader.string(index)
            keyNames[index] = name
            return name
        }

        mutating func decode(reference: Int, depth: Int) throws -> PlistValue {
            guard case .scalar(.uid(let uid)) = try reader.raw(reference) else {
                throw ArchiveError(description: "expected an object reference")
            }
            return try decode(uid: uid, depth: depth)
        }

        mutating func decode(uid: UInt64, depth: Int) throws -> PlistValue {
            budget -= 1
            guard depth < 512, budget >= 0 else {
                throw ArchiveError(description: "the archive nests too deeply or repeats itself")
            }
            guard uid > 0, uid < UInt64(objects.count) else {
                throw ArchiveError(description: uid == 0 ? "the archive holds nil" : "reference \(uid) out of range")
            }
            switch try reader.raw(objects[Int(uid)]) {
            case .scalar(let value):
                if case .uid = value { throw ArchiveError(description: "a reference where an object belongs") }
                return value
            case .array:
                throw ArchiveError(description: "a bare array where an object belongs")
            case .dictionary(let keys, let values):
                var fields: [String: Int] = [:]
                for (key, value) in zip(keys, values) {
                    fields[try keyName(key)] = value
                }
                guard let classReference = fields["$class"] else {
                    throw ArchiveError(description: "object \(uid) has no $class")
                }
                let className: String
                if let name = classNames[classReference] {
                    className = name
                } else {
                    className = try self.className(classReference)
                    classNames[classReference] = className
                }
                guard KeyedArchive.allowedClasses.contains(className) else {
                    throw ArchiveError(
                        description: "the archive holds an instance of class \(className), which is not allowed"
                    )
                }
                switch className {
                case "NSArray", "NSMutableArray":
                    return .array(try references(fields["NS.objects"]).map { try decode(uid: $0, depth: depth + 1) })
                case "NSDictionary", "NSMutableDictionary":
                    let keys = try references(fields["NS.keys"])
                    let values = try references(fields["NS.objects"])
                    guard keys.count == values.count else {
                        throw ArchiveError(description: "dictionary \(uid) has unmatched keys and values")
                    }
                    var dictionary: [String: PlistValue] = [:]
                    for (key, value) in zip(keys, values) {
                        guard case .string(let name) = try decode(uid: key, depth: depth + 1) else {
                            throw ArchiveError(description: "dictionary \(uid) has a key that is not a string")
                        }
                        dictionary[name] = try decode(uid: value, depth: depth + 1)
                    }
                    return .dictionary(dictionary)
                case "NSString", "NSMutableString":
                    return .string(try field(fields["NS.string"]) { if case .string(let s) = $0 { s } else { nil } })
                case "NSDate":
                    return .date(try field(fields["NS.time"]) { if case .real(let t) = $0 { t } else { nil } })
                default:
                    return .data(try field(fields["NS.data"]) { if case .data(let d) = $0 { d } else { nil } })
                }
            }
        }

        private func className(_ reference: Int) throws -> String {
            guard case .scalar(.uid(let uid)) = try reader.raw(reference), uid < UInt64(objects.count),
                case .dictionary(let keys, let values) = try reader.raw(objects[Int(uid)])
            else {
                throw ArchiveError(description: "a $class reference is damaged")
            }
            for (key, value) in zip(keys, values) where try reader.string(key) == "$classname" {
                return try reader.string(value)
            }
            throw ArchiveError(description: "a class description has no $classname")
        }

        private func references(_ index: Int?) throws -> [UInt64] {
            guard let index, case .array(let items) = try reader.raw(index) else {
                throw ArchiveError(description: "a container's contents are missing")
            }
            return try items.map { item in
                guard case .scalar(.uid(let uid)) = try reader.raw(item) else {
                    throw ArchiveError(description: "a container holds something other than references")
                }
                return uid
            }
        }

        private func field<T>(_ index: Int?, _ extract: (PlistValue) -> T?) throws -> T {
            guard let index, case .scalar(let value) = try reader.raw(index), let result = extract(value) else {
                throw ArchiveError(description: "an object's value is missing or of the wrong type")
            }
            return result
        }
    }
}
