public import Foundation

extension Notification.Name {
    /// Posted by an ``ObjectContext`` after `insert`, `update`, `delete` and `rollback`; `object` is the context,
    /// `userInfo` holds ``ObjectContextNotificationKey`` sets of ``ObjectID``s.
    public static let objectContextObjectsDidChange = Notification.Name("TetherObjectContextObjectsDidChange")
    /// Posted by an ``ObjectContext`` after a successful `save()`; `object` is the context, `userInfo` holds the saved
    /// ``ObjectID``s by ``ObjectContextNotificationKey``.
    public static let objectContextDidSave = Notification.Name("TetherObjectContextDidSave")
}

/// The `userInfo` keys of the object context notifications; each value is a `Set<ObjectID>`.
public enum ObjectContextNotificationKey {
    /// Objects inserted.
    public static let inserted = "inserted"
    /// Objects updated.
    public static let updated = "updated"
    /// Objects deleted.
    public static let deleted = "deleted"
}
