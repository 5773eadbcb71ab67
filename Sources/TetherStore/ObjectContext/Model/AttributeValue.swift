public import Foundation

/// The value of an attribute; an absent value is `nil` (no key in ``ManagedObject/values``).
public enum AttributeValue: Sendable, Hashable, Codable {
    /// Text.
    case string(String)
    /// A 64-bit integer.
    case integer(Int64)
    /// A double.
    case double(Double)
    /// A boolean.
    case boolean(Bool)
    /// A date, kept exactly.
    case date(Date)
    /// Bytes.
    case binary(Data)
    /// A UUID.
    case uuid(UUID)

    /// The type of this value.
    public var type: AttributeType {
        switch self {
        case .string: .string
        case .integer: .integer
        case .double: .double
        case .boolean: .boolean
        case .date: .date
        case .binary: .binary
        case .uuid: .uuid
        }
    }

    /// Orders two values of the same type (strings by Unicode scalar values); `nil` for different types.
    func compare(to other: AttributeValue) -> ComparisonResult? {
        func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
            a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        }
        switch (self, other) {
        case (.string(let a), .string(let b)):
            if a.unicodeScalars.elementsEqual(b.unicodeScalars) { return .orderedSame }
            return a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars) { $0.value < $1.value }
                ? .orderedAscending : .orderedDescending
        case (.integer(let a), .integer(let b)): return order(a, b)
        case (.double(let a), .double(let b)): return order(a, b)
        case (.boolean(let a), .boolean(let b)): return order(a ? 1 : 0, b ? 1 : 0)
        case (.date(let a), .date(let b)): return order(a, b)
        case (.binary(let a), .binary(let b)):
            if a == b { return .orderedSame }
            return a.lexicographicallyPrecedes(b) ? .orderedAscending : .orderedDescending
        case (.uuid(let a), .uuid(let b)): return order(a.uuidString, b.uuidString)
        default: return nil
        }
    }
}
