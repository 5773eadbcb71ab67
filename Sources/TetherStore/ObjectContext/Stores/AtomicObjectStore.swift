import Foundation
import TetherConcurrency

/// The binary-file and in-memory stores: the whole object graph in memory; a binary file store writes all of it
/// with the temporary-file/fsync/rename/fsync-directory sequence on every save (Core Data's atomic store).
final class AtomicObjectStore: ObjectStoreBackend, Sendable {
    private struct FileContents: Codable {
        var model: StoredModel
        var objects: [StoredObject]
    }

    private struct State {
        var objects = OrderedRecords<StoredObject>()
    }

    private let url: URL?
    private let model: StoredModel
    private let fileLock: FileLock?
    private let state = LockedBox(State())

    /// A store that lives in memory only.
    init(model: ObjectModel) {
        url = nil
        fileLock = nil
        self.model = StoredModel(model)
    }

    /// Opens (or prepares to create) a binary store file, checking and migrating its model.
    init(url: URL, model: ObjectModel) throws {
        self.url = url
        self.model = StoredModel(model)
        fileLock = try FileLock(url: URL(fileURLWithPath: url.path + ".lock"))
        guard let data = try FileIO.readIfExists(url) else { return }
        let contents: FileContents
        do {
            contents = try PropertyListDecoder().decode(FileContents.self, from: data)
        } catch {
            throw StoreError(code: .corruptData, message: "not a binary object store", url: url, underlying: error)
        }
        let fills = try contents.model.migration(to: model, url: url)
        var objects = OrderedRecords<StoredObject>()
        for var object in contents.objects {
            for (name, value) in fills[object.id.entityName] ?? [:] where object.values[name] == nil {
                object.values[name] = value
            }
            objects.put(object)
        }
        state.withLock { $0.objects = objects }
        if contents.model != self.model {
            try write(objects)
        }
        FileIO.removeLeftoverTemporaryFiles(for: url)
    }

    func objects(entityName: String) throws -> [StoredObject] {
        state.withLock { state in state.objects.all.filter { $0.id.entityName == entityName } }
    }

    func object(_ id: ObjectID) throws -> StoredObject? {
        state.withLock { state in state.objects[id] }
    }

    func apply(_ changes: ObjectChangeSet) throws -> [ObjectID: Int64] {
        try state.withLock { state in
            var objects = state.objects
            var versions: [ObjectID: Int64] = [:]
            for (id, expected) in changes.deleted {
                let current = objects[id]
                if let expected, current?.version != expected {
                    throw StoreError(
                        code: .conflict,
                        message: "\(id) changed or was deleted since it was read",
                        url: url
                    )
                }
                objects.remove(id)
            }
            for (object, expected) in changes.updated {
                guard let current = objects[object.id] else {
                    throw StoreError(code: .conflict, message: "\(object.id) was deleted since it was read", url: url)
                }
                if let expected, current.version != expected {
                    throw StoreError(code: .conflict, message: "\(object.id) changed since it was read", url: url)
                }
                objects.put(StoredObject(id: object.id, values: object.values, version: current.version + 1))
                versions[object.id] = current.version + 1
            }
            for object in changes.inserted {
                guard !objects.contains(object.id) else {
                    throw StoreError(code: .conflict, message: "\(object.id) exists", url: url)
                }
                objects.put(StoredObject(id: object.id, values: object.values, version: 1))
                versions[object.id] = 1
            }
            try write(objects)
            state.objects = objects
            return versions
        }
    }

    private func write(_ objects: OrderedRecords<StoredObject>) throws {
        guard let url else { return }
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        let data: Data
        do {
            data = try encoder.encode(FileContents(model: model, objects: objects.all))
        } catch {
            throw StoreError(code: .invalidArgument, message: "objects cannot be encoded", url: url, underlying: error)
        }
        try FileIO.writeAtomically(data, to: url)
    }
}
