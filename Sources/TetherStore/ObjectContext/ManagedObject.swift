/// A value snapshot of an object: changing it does nothing until it is passed to ``ObjectContext/update(_:)``.
public struct ManagedObject: Sendable, Hashable, Identifiable {
    /// The object's identity.
    public let id: ObjectID
    /// The object's entity.
    public var entityName: String { id.entityName }
    /// The attribute values; an absent key is `nil`.
    public var values: [String: AttributeValue]
    /// The store version this snapshot was read at (`nil` for an object inserted in a context): what a save of it
    /// checks against. Not part of equality: two snapshots of the same values are equal.
    package var readVersion: Int64?

    package init(id: ObjectID, values: [String: AttributeValue], readVersion: Int64? = nil) {
        self.id = id
        self.values = values
        self.readVersion = readVersion
    }

    /// Whether both have the same identity and values (whenever they were read).
    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool {
        lhs.id == rhs.id && lhs.values == rhs.values
    }

    /// Hashes the identity and the values.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(values)
    }

    /// The value of attribute `key`, or `nil`.
    public subscript(key: String) -> AttributeValue? {
        get { values[key] }
        set { values[key] = newValue }
    }
}
