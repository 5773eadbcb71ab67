/// An entity: a named kind of object with attributes (a table, in SQL terms).
public struct EntityDescription: Sendable, Hashable {
    /// The entity's name.
    public var name: String
    /// The entity's attributes.
    public var attributes: [AttributeDescription]

    /// Creates an entity description.
    /// - Parameters:
    ///   - name: The entity's name.
    ///   - attributes: Its attributes, with unique names.
    public init(name: String, attributes: [AttributeDescription]) {
        self.name = name
        self.attributes = attributes
    }

    /// The attribute named `name`.
    func attribute(_ name: String) -> AttributeDescription? {
        attributes.first { $0.name == name }
    }
}
