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
        /// A store of another Tether module, described by the string (where it is, without a password): a
        /// container made by that module (e.g. TetherPostgres's `PersistentContainer(name:model:postgres:)`) loads
        /// it; a container created with it here cannot load.
        case external(String)
    }

    /// The container's name.
    public let name: String
    /// The schema.
    public let model: ObjectModel
    /// Where the objects live.
    public let storeType: StoreType

    let slot: BackendSlot
    private let view: ObjectContext
    private let makeExternalBackend: (@Sendable () throws -> any ObjectStoreBackend)?

    /// Creates a container; call ``loadPersistentStores()`` before using a context.
    /// - Parameters:
    ///   - name: The container's name.
    ///   - model: The schema.
    ///   - storeType: Where the objects live.
    public init(name: String, model: ObjectModel, storeType: StoreType) {
        self.name = name
        self.model = model
        self.storeType = storeType
        self.makeExternalBackend = nil
        let slot = BackendSlot()
        self.slot = slot
        self.view = ObjectContext(model: model, slot: slot)
    }

    /// A container on a store of another module of this package (`package` access: TetherPostgres).
    /// - Parameters:
    ///   - name: The container's name.
    ///   - model: The schema.
    ///   - description: Where the store is, for ``storeType``.
    ///   - makeBackend: Opens the store (in ``loadPersistentStores()``).
    package init(
        name: String,
        model: ObjectModel,
        externalStore description: String,
        makeBackend: @escaping @Sendable () throws -> any ObjectStoreBackend
    ) {
        self.name = name
        self.model = model
        self.storeType = .external(description)
        self.makeExternalBackend = makeBackend
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
            case .sqlite(let url): return try SQLiteObjectStore(url: url, model: model)
            case .binary(let url): return try AtomicObjectStore(url: url, model: model)
            case .inMemory: return AtomicObjectStore(model: model)
            case .external(let description):
                guard let makeExternalBackend else {
                    throw StoreError(
                        code: .invalidArgument,
                        message: "an external store (\(description)) is loaded by the module that made the container"
                    )
                }
                return try makeExternalBackend()
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
