/// The type of an attribute of an entity.
public enum AttributeType: String, Sendable, Hashable, Codable, CaseIterable {
    /// ``AttributeValue/string(_:)``.
    case string
    /// ``AttributeValue/integer(_:)``.
    case integer
    /// ``AttributeValue/double(_:)``.
    case double
    /// ``AttributeValue/boolean(_:)``.
    case boolean
    /// ``AttributeValue/date(_:)``.
    case date
    /// ``AttributeValue/binary(_:)``.
    case binary
    /// ``AttributeValue/uuid(_:)``.
    case uuid
}
