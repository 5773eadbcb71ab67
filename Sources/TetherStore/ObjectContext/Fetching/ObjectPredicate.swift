import Foundation

/// A condition on an object's attribute values, evaluated in Swift (Linux Foundation has no `NSPredicate(format:)`).
///
/// Comparisons are between values of the same type; a comparison with another value type, or with `nil` (except
/// ``equal(_:_:)`` and ``notEqual(_:_:)``), is false.
public struct ObjectPredicate: Sendable, Hashable {
    indirect enum Node: Sendable, Hashable {
        enum Comparison: Sendable, Hashable {
            case less, lessOrEqual, greater, greaterOrEqual
        }

        case all
        case equal(String, AttributeValue?)
        case notEqual(String, AttributeValue?)
        case compare(String, Comparison, AttributeValue)
        case contains(String, String, caseInsensitive: Bool)
        case beginsWith(String, String, caseInsensitive: Bool)
        case isIn(String, [AttributeValue])
        case and(Node, Node)
        case or(Node, Node)
        case not(Node)
    }

    let node: Node

    /// Matches every object (`TRUEPREDICATE`).
    public static let all = ObjectPredicate(node: .all)

    /// `key == value`; `nil` matches an absent value.
    public static func equal(_ key: String, _ value: AttributeValue?) -> ObjectPredicate {
        ObjectPredicate(node: .equal(key, value))
    }

    /// `key != value`; `nil` matches a present value.
    public static func notEqual(_ key: String, _ value: AttributeValue?) -> ObjectPredicate {
        ObjectPredicate(node: .notEqual(key, value))
    }

    /// `key < value`.
    public static func less(_ key: String, _ value: AttributeValue) -> ObjectPredicate {
        ObjectPredicate(node: .compare(key, .less, value))
    }

    /// `key <= value`.
    public static func lessOrEqual(_ key: String, _ value: AttributeValue) -> ObjectPredicate {
        ObjectPredicate(node: .compare(key, .lessOrEqual, value))
    }

    /// `key > value`.
    public static func greater(_ key: String, _ value: AttributeValue) -> ObjectPredicate {
        ObjectPredicate(node: .compare(key, .greater, value))
    }

    /// `key >= value`.
    public static func greaterOrEqual(_ key: String, _ value: AttributeValue) -> ObjectPredicate {
        ObjectPredicate(node: .compare(key, .greaterOrEqual, value))
    }

    /// The string attribute `key` contains `substring`.
    public static func contains(_ key: String, _ substring: String, caseInsensitive: Bool = false) -> ObjectPredicate {
        ObjectPredicate(node: .contains(key, substring, caseInsensitive: caseInsensitive))
    }

    /// The string attribute `key` begins with `prefix`.
    public static func beginsWith(_ key: String, _ prefix: String, caseInsensitive: Bool = false) -> ObjectPredicate {
        ObjectPredicate(node: .beginsWith(key, prefix, caseInsensitive: caseInsensitive))
    }

    /// `key` equals one of `values`.
    public static func isIn(_ key: String, _ values: [AttributeValue]) -> ObjectPredicate {
        ObjectPredicate(node: .isIn(key, values))
    }

    /// Both conditions hold.
    public static func && (lhs: ObjectPredicate, rhs: ObjectPredicate) -> ObjectPredicate {
        ObjectPredicate(node: .and(lhs.node, rhs.node))
    }

    /// Either condition holds.
    public static func || (lhs: ObjectPredicate, rhs: ObjectPredicate) -> ObjectPredicate {
        ObjectPredicate(node: .or(lhs.node, rhs.node))
    }

    /// The condition does not hold.
    public static prefix func ! (operand: ObjectPredicate) -> ObjectPredicate {
        ObjectPredicate(node: .not(operand.node))
    }

    /// Whether `object` satisfies the condition.
    public func evaluate(_ object: ManagedObject) -> Bool {
        Self.evaluate(node, object.values)
    }

    /// Every attribute key the predicate mentions.
    var keys: Set<String> {
        var keys = Set<String>()
        func collect(_ node: Node) {
            switch node {
            case .all: break
            case .equal(let key, _), .notEqual(let key, _), .compare(let key, _, _), .contains(let key, _, _),
                .beginsWith(let key, _, _), .isIn(let key, _):
                keys.insert(key)
            case .and(let lhs, let rhs), .or(let lhs, let rhs):
                collect(lhs)
                collect(rhs)
            case .not(let operand):
                collect(operand)
            }
        }
        collect(node)
        return keys
    }

    private static func evaluate(_ node: Node, _ values: [String: AttributeValue]) -> Bool {
        switch node {
        case .all:
            return true
        case .equal(let key, let value):
            guard let value else { return values[key] == nil }
            return values[key].flatMap { $0.compare(to: value) } == .orderedSame
        case .notEqual(let key, let value):
            guard let value else { return values[key] != nil }
            guard let stored = values[key] else { return true }
            guard let order = stored.compare(to: value) else { return false }
            return order != .orderedSame
        case .compare(let key, let comparison, let value):
            guard let order = values[key]?.compare(to: value) else { return false }
            switch comparison {
            case .less: return order == .orderedAscending
            case .lessOrEqual: return order != .orderedDescending
            case .greater: return order == .orderedDescending
            case .greaterOrEqual: return order != .orderedAscending
            }
        case .contains(let key, let substring, let caseInsensitive):
            guard case .string(let string)? = values[key] else { return false }
            if substring.isEmpty { return true }
            return string.range(of: substring, options: caseInsensitive ? [.caseInsensitive] : []) != nil
        case .beginsWith(let key, let prefix, let caseInsensitive):
            guard case .string(let string)? = values[key] else { return false }
            if prefix.isEmpty { return true }
            var options: String.CompareOptions = [.anchored]
            if caseInsensitive { options.insert(.caseInsensitive) }
            return string.range(of: prefix, options: options) != nil
        case .isIn(let key, let candidates):
            guard let stored = values[key] else { return false }
            return candidates.contains { stored.compare(to: $0) == .orderedSame }
        case .and(let lhs, let rhs):
            return evaluate(lhs, values) && evaluate(rhs, values)
        case .or(let lhs, let rhs):
            return evaluate(lhs, values) || evaluate(rhs, values)
        case .not(let operand):
            return !evaluate(operand, values)
        }
    }
}
