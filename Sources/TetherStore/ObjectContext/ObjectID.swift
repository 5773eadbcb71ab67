public import Foundation

/// The permanent identity of an object, assigned at insert.
public struct ObjectID: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The object's entity.
    public let entityName: String
    /// The object's unique id.
    public let uuid: UUID

    package init(entityName: String, uuid: UUID = UUID()) {
        self.entityName = entityName
        self.uuid = uuid
    }

    /// `tether://<entity>/<uuid>`.
    public var description: String {
        "tether://\(entityName)/\(uuid.uuidString)"
    }
}
