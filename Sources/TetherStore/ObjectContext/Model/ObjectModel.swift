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
