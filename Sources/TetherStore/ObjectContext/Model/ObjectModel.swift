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

/// The schema of a ``PersistentContainer``: its entities.
public struct ObjectModel: Sendable, Hashable {
    /// The entities.
    public var entities: [EntityDescription]

    /// Creates a model.
    /// - Parameter entities: The entities; entity names, and attribute names within an entity, must be unique
    ///   (precondition).
    public init(entities: [EntityDescription]) {
        precondition(Set(entities.map(\.name)).count == entities.count, "entity names must be unique")
        for entity in entities {
            precondition(
                Set(entity.attributes.map(\.name)).count == entity.attributes.count,
                "attribute names of \(entity.name) must be unique"
            )
        }
        self.entities = entities
    }

    /// The entity named `name`, or `nil`.
    public subscript(entityName name: String) -> EntityDescription? {
        entities.first { $0.name == name }
    }
}
