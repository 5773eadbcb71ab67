import Foundation
import TetherConcurrency

/// A unit of work on a ``PersistentContainer``'s store: insert, update and delete objects, fetch them (store state
/// plus this context's pending changes), then `save()` all at once or `rollback()`.
///
/// Contexts hand out value snapshots (``ManagedObject``). Saving an update or delete of an object that another
/// context saved after the snapshot was read fails with ``StoreError/Code/conflict`` (nothing written, pending changes
/// kept): each snapshot carries the version it was read at, so an update from an older snapshot conflicts even when
/// the context fetched a newer one since; this context's own saves do not make its snapshots stale. Each context serialises its own calls; `save()` does synchronous I/O.
public final class ObjectContext {
    private struct Pending {
        var inserted = OrderedRecords<ManagedObject>()
        var updated: [ObjectID: ManagedObject] = [:]
        var deleted: [ObjectID: ManagedObject] = [:]
        /// The store version of each object as this context last read it.
        var readVersions: [ObjectID: Int64] = [:]
        /// For each object this context saved: the versions that only its own saves moved on from, and the version
        /// its last save wrote. A snapshot read at one of them is current as far as this context knows.
        var ownSaves: [ObjectID: (versions: Set<Int64>, latest: Int64)] = [:]

        var isEmpty: Bool { inserted.count == 0 && updated.isEmpty && deleted.isEmpty }

        /// The version a save of `object` expects: the one it was read at, moved on past this context's own saves.
        func expectedVersion(of object: ManagedObject) -> Int64? {
            guard let read = object.readVersion else { return nil }
            if let saves = ownSaves[object.id], saves.versions.contains(read) { return saves.latest }
            return read
        }

        /// This context's save moved the object `id` from version `from` to `to`.
        mutating func saved(_ id: ObjectID, from: Int64?, to: Int64) {
            var versions: Set<Int64> = [to]
            if let from {
                versions.insert(from)
                if let saves = ownSaves[id], saves.latest == from { versions.formUnion(saves.versions) }
            }
            ownSaves[id] = (versions, to)
        }
    }

    private let model: ObjectModel
    private let slot: BackendSlot
    private let state = LockedBox(Pending())

    init(model: ObjectModel, slot: BackendSlot) {
        self.model = model
        self.slot = slot
    }

    // MARK: - Changes

    /// Inserts a new object; attributes not given get their default value.
    /// - Parameters:
    ///   - entityName: The entity of the new object.
    ///   - values: Its attribute values.
    /// - Returns: The new object's snapshot, with its permanent ``ObjectID``.
    /// - Throws: ``StoreError/Code/validation`` for an unknown entity or attribute or a value of the wrong type.
    @discardableResult
    public func insert(entityName: String, values: [String: AttributeValue] = [:]) throws -> ManagedObject {
        let entity = try self.entity(entityName)
        try validate(values, of: entity)
        var filled = values
        for attribute in entity.attributes where filled[attribute.name] == nil {
            if let value = attribute.defaultValue { filled[attribute.name] = value }
        }
        let object = ManagedObject(id: ObjectID(entityName: entityName), values: filled)
        state.withLock { pending in _ = pending.inserted.put(object) }
        post(.objectContextObjectsDidChange, inserted: [object.id])
        return object
    }

    /// Stages the snapshot's values for the next save.
    /// - Throws: ``StoreError/Code/validation`` for an unknown entity or attribute or a value of the wrong type,
    ///   ``StoreError/Code/notFound`` when the object is neither pending nor in the store (or is pending deletion).
    public func update(_ object: ManagedObject) throws {
        let entity = try self.entity(object.entityName)
        try validate(object.values, of: entity)
        try state.withLock { pending in
            if pending.inserted.contains(object.id) {
                pending.inserted.put(object)
                return
            }
            guard pending.deleted[object.id] == nil else {
                throw StoreError(code: .notFound, message: "\(object.id) is deleted in this context")
            }
            // The snapshot's own read version: a snapshot older than a later fetch still conflicts.
            if let expected = pending.expectedVersion(of: object) {
                pending.readVersions[object.id] = expected
            } else if pending.readVersions[object.id] == nil {
                guard let stored = try slot.store.object(object.id) else {
                    throw StoreError(code: .notFound, message: "\(object.id) is not in the store")
                }
                pending.readVersions[object.id] = stored.version
            }
            pending.updated[object.id] = object
        }
        post(.objectContextObjectsDidChange, updated: [object.id])
    }

    /// Stages the object's deletion for the next save.
    public func delete(_ object: ManagedObject) {
        delete(objectID: object.id, snapshot: object)
    }

    /// Stages the deletion of the object with this id for the next save.
    public func delete(objectID: ObjectID) {
        delete(objectID: objectID, snapshot: nil)
    }

    private func delete(objectID: ObjectID, snapshot: ManagedObject?) {
        let changed = state.withLock { pending -> Bool in
            if pending.inserted.remove(objectID) != nil { return true }
            if pending.deleted[objectID] != nil { return false }
            var snapshot = pending.updated.removeValue(forKey: objectID) ?? snapshot
            if let snapshot, let expected = pending.expectedVersion(of: snapshot) {
                pending.readVersions[objectID] = expected
            }
            if pending.readVersions[objectID] == nil || snapshot == nil {
                if let stored = try? slot.store.object(objectID) {
                    if pending.readVersions[objectID] == nil { pending.readVersions[objectID] = stored.version }
                    snapshot = snapshot ?? ManagedObject(id: objectID, values: stored.values)
                } else if pending.readVersions[objectID] == nil {
                    return false  // not in the store: nothing to delete
                }
            }
            pending.deleted[objectID] = snapshot ?? ManagedObject(id: objectID, values: [:])
            return true
        }
        if changed { post(.objectContextObjectsDidChange, deleted: [objectID]) }
    }

    // MARK: - Reading

    /// The object with this id as this context sees it, or `nil` (absent or pending deletion).
    public func object(with objectID: ObjectID) throws -> ManagedObject? {
        try state.withLock { pending in
            if let inserted = pending.inserted[objectID] { return inserted }
            if pending.deleted[objectID] != nil { return nil }
            if let updated = pending.updated[objectID] { return updated }
            guard let stored = try slot.store.object(objectID) else { return nil }
            pending.readVersions[objectID] = stored.version
            return ManagedObject(id: objectID, values: stored.values, readVersion: stored.version)
        }
    }

    /// The objects matching the request: the store's state plus this context's pending changes.
    /// - Throws: ``StoreError/Code/validation`` for an unknown entity, or a predicate or sort key the entity lacks.
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        let entity = try self.entity(request.entityName)
        var keys = request.predicate?.keys ?? []
        keys.formUnion(request.sortDescriptors.map(\.key))
        for key in keys where entity.attribute(key) == nil {
            throw StoreError(code: .validation, message: "entity \(entity.name) has no attribute \(key)")
        }
        guard request.fetchLimit >= 0, request.fetchOffset >= 0 else {
            throw StoreError(code: .invalidArgument, message: "fetchLimit and fetchOffset must not be negative")
        }
        var objects = try state.withLock { pending -> [ManagedObject] in
            var objects: [ManagedObject] = []
            for stored in try slot.store.objects(entityName: entity.name) {
                if pending.deleted[stored.id] != nil { continue }
                if let updated = pending.updated[stored.id] {
                    objects.append(updated)
                } else {
                    pending.readVersions[stored.id] = stored.version
                    objects.append(ManagedObject(id: stored.id, values: stored.values, readVersion: stored.version))
                }
            }
            objects.append(contentsOf: pending.inserted.all.filter { $0.entityName == entity.name })
            return objects
        }
        if let predicate = request.predicate {
            objects = objects.filter { predicate.evaluate($0) }
        }
        if !request.sortDescriptors.isEmpty {
            objects = Self.sorted(objects, by: request.sortDescriptors)
        }
        if request.fetchOffset > 0 {
            objects = Array(objects.dropFirst(request.fetchOffset))
        }
        if request.fetchLimit > 0 {
            objects = Array(objects.prefix(request.fetchLimit))
        }
        return objects
    }

    /// The number of objects ``fetch(_:)`` would return.
    public func count(for request: FetchRequest) throws -> Int {
        try fetch(request).count
    }

    // MARK: - Saving

    /// Writes every pending change to the store at once; does nothing without changes.
    /// - Throws: ``StoreError/Code/validation`` when a required attribute is missing, ``StoreError/Code/conflict``
    ///   when another context saved an object this one changes since it read it; in both cases nothing is written
    ///   and the pending changes are kept.
    public func save() throws {
        let saved = try state.withLock { pending -> (Set<ObjectID>, Set<ObjectID>, Set<ObjectID>)? in
            guard !pending.isEmpty else { return nil }
            for object in pending.inserted.all + Array(pending.updated.values) {
                let entity = try self.entity(object.entityName)
                for attribute in entity.attributes where !attribute.isOptional && object.values[attribute.name] == nil {
                    throw StoreError(
                        code: .validation,
                        message: "\(object.id) lacks the required attribute \(attribute.name)"
                    )
                }
            }
            var changes = ObjectChangeSet()
            changes.inserted = pending.inserted.all
            changes.updated = pending.updated.values.map { ($0, pending.readVersions[$0.id]) }
            changes.deleted = pending.deleted.keys.map { ($0, pending.readVersions[$0]) }
            let versions = try slot.store.apply(changes)
            let result = (
                Set(changes.inserted.map(\.id)), Set(pending.updated.keys), Set(pending.deleted.keys)
            )
            for id in pending.deleted.keys {
                pending.readVersions[id] = nil
                pending.ownSaves[id] = nil
            }
            for (object, expected) in changes.updated {
                if let version = versions[object.id] { pending.saved(object.id, from: expected, to: version) }
            }
            for object in changes.inserted {
                if let version = versions[object.id] { pending.saved(object.id, from: nil, to: version) }
            }
            pending.readVersions.merge(versions) { $1 }
            pending.inserted = OrderedRecords()
            pending.updated = [:]
            pending.deleted = [:]
            return result
        }
        if let (inserted, updated, deleted) = saved {
            post(.objectContextDidSave, inserted: inserted, updated: updated, deleted: deleted)
        }
    }

    /// Discards every pending change; the next fetch reads the stored state.
    public func rollback() {
        let discarded = state.withLock { pending -> (Set<ObjectID>, Set<ObjectID>, Set<ObjectID>) in
            let result = (
                Set(pending.inserted.all.map(\.id)), Set(pending.updated.keys), Set(pending.deleted.keys)
            )
            for id in result.1.union(result.2) { pending.readVersions[id] = nil }
            pending.inserted = OrderedRecords()
            pending.updated = [:]
            pending.deleted = [:]
            return result
        }
        post(.objectContextObjectsDidChange, inserted: discarded.0, updated: discarded.1, deleted: discarded.2)
    }

    /// Whether there are unsaved changes.
    public var hasChanges: Bool {
        state.withLock { pending in !pending.isEmpty }
    }

    /// The objects inserted since the last save.
    public var insertedObjects: Set<ManagedObject> {
        state.withLock { pending in Set(pending.inserted.all) }
    }

    /// The objects updated since the last save, with their staged values.
    public var updatedObjects: Set<ManagedObject> {
        state.withLock { pending in Set(pending.updated.values) }
    }

    /// The objects deleted since the last save, as last read.
    public var deletedObjects: Set<ManagedObject> {
        state.withLock { pending in Set(pending.deleted.values) }
    }

    // MARK: - Helpers

    private func entity(_ name: String) throws -> EntityDescription {
        guard let entity = model[entityName: name] else {
            throw StoreError(code: .validation, message: "the model has no entity \(name)")
        }
        return entity
    }

    private func validate(_ values: [String: AttributeValue], of entity: EntityDescription) throws {
        for (key, value) in values {
            guard let attribute = entity.attribute(key) else {
                throw StoreError(code: .validation, message: "entity \(entity.name) has no attribute \(key)")
            }
            guard attribute.type == value.type else {
                throw StoreError(
                    code: .validation,
                    message: "\(entity.name).\(key) is a \(attribute.type), not a \(value.type)"
                )
            }
        }
    }

    private static func sorted(_ objects: [ManagedObject], by descriptors: [ObjectSortDescriptor]) -> [ManagedObject] {
        objects.enumerated().sorted { lhs, rhs in
            for descriptor in descriptors {
                let order: ComparisonResult
                switch (lhs.element.values[descriptor.key], rhs.element.values[descriptor.key]) {
                case (nil, nil): order = .orderedSame
                case (nil, _): order = .orderedAscending
                case (_, nil): order = .orderedDescending
                case (let a?, let b?): order = a.compare(to: b) ?? .orderedSame
                }
                if order != .orderedSame {
                    return descriptor.ascending ? order == .orderedAscending : order == .orderedDescending
                }
            }
            return lhs.offset < rhs.offset
        }.map(\.element)
    }

    private func post(
        _ name: Notification.Name,
        inserted: Set<ObjectID> = [],
        updated: Set<ObjectID> = [],
        deleted: Set<ObjectID> = []
    ) {
        NotificationCenter.default.post(
            name: name,
            object: self,
            userInfo: [
                ObjectContextNotificationKey.inserted: inserted,
                ObjectContextNotificationKey.updated: updated,
                ObjectContextNotificationKey.deleted: deleted,
            ]
        )
    }
}

extension ObjectContext: Sendable {}
