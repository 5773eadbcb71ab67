package import Foundation

/// The model as it is stored next to the data, to check and migrate at load.
package struct StoredModel: Codable, Equatable {
    struct Attribute: Codable, Equatable {
        var name: String
        var type: AttributeType
        var isOptional: Bool
        var defaultValue: AttributeValue?
    }

    struct Entity: Codable, Equatable {
        var name: String
        var attributes: [Attribute]
    }

    var entities: [Entity]

    package init(_ model: ObjectModel) {
        entities = model.entities.map { entity in
            Entity(
                name: entity.name,
                attributes: entity.attributes.map {
                    Attribute(name: $0.name, type: $0.type, isOptional: $0.isOptional, defaultValue: $0.defaultValue)
                }
            )
        }
    }

    /// The default values to fill into existing objects to move from `self` to `model`, per entity.
    /// - Throws: `.incompatibleModel` for any change other than new entities and new optional or defaulted attributes.
    package func migration(to model: ObjectModel, url: URL?) throws -> [String: [String: AttributeValue]] {
        var fills: [String: [String: AttributeValue]] = [:]
        func incompatible(_ reason: String) -> StoreError {
            StoreError(code: .incompatibleModel, message: "the stored model cannot be migrated: \(reason)", url: url)
        }
        for old in entities {
            guard let new = model[entityName: old.name] else { throw incompatible("entity \(old.name) was removed") }
            for attribute in old.attributes {
                guard let replacement = new.attribute(attribute.name) else {
                    throw incompatible("attribute \(old.name).\(attribute.name) was removed")
                }
                guard replacement.type == attribute.type, replacement.isOptional == attribute.isOptional else {
                    throw incompatible("attribute \(old.name).\(attribute.name) changed its type or optionality")
                }
            }
            for attribute in new.attributes where !old.attributes.contains(where: { $0.name == attribute.name }) {
                if let value = attribute.defaultValue {
                    fills[old.name, default: [:]][attribute.name] = value
                } else if !attribute.isOptional {
                    throw incompatible("new attribute \(old.name).\(attribute.name) is required and has no default")
                }
            }
        }
        return fills
    }
}
