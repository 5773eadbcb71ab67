public import Foundation
import TetherConcurrency

/// A Core Data–like stack: a model, one persistent store (SQLite, binary file or memory) and the contexts that work
/// on it.
///
/// ```swift
/// let container = PersistentContainer(name: "Notes", model: model, storeType: .sqlite(url))
/// try container.loadPersistentStores()
/// let context = container.viewContext
/// try context.insert(entityName: "Note", values: ["content": .string("Hello")])
/// try context.save()
/// ```
public final class PersistentContainer: Sendable {
    /// Where the container keeps its objects.
    public enum StoreType: Sendable, Hashable {
        /// An SQLite database (WAL, `synchronous = FULL`); each save is one transaction.
        case sqlite(URL)
        /// A binary property list file, rewritten atomically (temporary file, fsync, rename) on each save.
        case binary(URL)
        /// Memory only, for as long as the container lives.
        case inMemory
    }

    /// The container's name.
    public let name: String
    /// The schema.
    public let model: ObjectModel
    /// Where the objects live.
    public let storeType: StoreType

    let slot: BackendSlot
    private let view: ObjectContext

    /// Creates a container; call ``loadPersistentStores()`` before using a context.
    /// - Parameters:
    ///   - name: The container's name.
    ///   - model: The schema.
    ///   - storeType: Where the objects live.
    public init(name: String, model: ObjectModel, storeType: StoreType) {
        self.name = name
        self.model = model
        self.storeType = storeType
        let slot = BackendSlot()
        self.slot = slot
        self.view = ObjectContext(model: model, slot: slot)
    }

    /// Opens or creates the store, migrating it in place when the model only adds entities or attributes that are
    /// optional or have a default. Calling it again does nothing.
    /// - Throws: ``StoreError/Code/incompatibleModel`` for any other model difference (the file is not changed),
    ///   ``StoreError/Code/corruptData``, ``StoreError/Code/locked`` or ``StoreError/Code/io``.
    public func loadPersistentStores() throws {
        try slot.load {
            switch storeType {
            case .sqlite(let url): try SQLiteObjectStore(url: url, model: model)
            case .binary(let url): try AtomicObjectStore(url: url, model: model)
            case .inMemory: AtomicObjectStore(model: model)
            }
        }
    }

    /// The one shared context.
    public var viewContext: ObjectContext { view }

    /// A new context on the same store, independent of the others until it saves.
    public func newBackgroundContext() -> ObjectContext {
        ObjectContext(model: model, slot: slot)
    }
}

/// The loaded store, shared by a container and its contexts.
final class BackendSlot: Sendable {
    private let backend = LockedBox<(any ObjectStoreBackend)?>(nil)

    func load(_ make: () throws -> any ObjectStoreBackend) throws {
        try backend.withLock { backend in
            if backend == nil { backend = try make() }
        }
    }

    var store: any ObjectStoreBackend {
        backend.withLock { backend in
            guard let backend else {
                preconditionFailure("call PersistentContainer.loadPersistentStores() before using a context")
            }
            return backend
        }
    }
}
