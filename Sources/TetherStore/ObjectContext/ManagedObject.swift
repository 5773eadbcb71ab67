/// A value snapshot of an object: changing it does nothing until it is passed to ``ObjectContext/update(_:)``.
public struct ManagedObject: Sendable, Hashable, Identifiable {
    /// The object's identity.
    public let id: ObjectID
    /// The object's entity.
    public var entityName: String { id.entityName }
    /// The attribute values; an absent key is `nil`.
    public var values: [String: AttributeValue]

    package init(id: ObjectID, values: [String: AttributeValue]) {
        self.id = id
        self.values = values
    }

    /// The value of attribute `key`, or `nil`.
    public subscript(key: String) -> AttributeValue? {
        get { values[key] }
        set { values[key] = newValue }
    }
}
