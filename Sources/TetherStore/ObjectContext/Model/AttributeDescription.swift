/// One attribute of an entity.
public struct AttributeDescription: Sendable, Hashable {
    /// The attribute's name (the key in ``ManagedObject/values``).
    public var name: String
    /// The attribute's value type.
    public var type: AttributeType
    /// Whether the attribute may be absent when saving. Default `false`.
    public var isOptional: Bool
    /// The value ``ObjectContext/insert(entityName:values:)`` puts in when none is given. Default `nil`.
    public var defaultValue: AttributeValue?

    /// Creates an attribute description.
    /// - Parameters:
    ///   - name: The attribute's name.
    ///   - type: The attribute's value type.
    ///   - isOptional: Whether it may be absent when saving.
    ///   - defaultValue: The value an insert starts with.
    public init(name: String, type: AttributeType, isOptional: Bool = false, defaultValue: AttributeValue? = nil) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue
    }
}
