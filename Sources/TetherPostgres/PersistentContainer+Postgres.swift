public import TetherStore

extension PersistentContainer {
    /// A container whose store is a PostgreSQL database: the object context works on it unchanged, each save one
    /// transaction, and a save that lost a race to another container or process on the same objects fails with
    /// `StoreError.Code.conflict` (the stored `version` of each object is checked, rows locked while saving).
    ///
    /// `loadPersistentStores()` creates the tables (`tether_metadata`, `tether_object`) or migrates the stored
    /// model as the SQLite store does. Use one database (or schema) per container. The context's calls are
    /// synchronous: they wait for the database, on the calling thread.
    /// - Parameters:
    ///   - name: The container's name.
    ///   - model: The schema.
    ///   - configuration: Where the database is (e.g. `try PostgresConfiguration(url: "postgres://…")`).
    public convenience init(name: String, model: ObjectModel, postgres configuration: PostgresConfiguration) {
        let description = "postgres://\(configuration.username)@\(configuration.endpoint)/\(configuration.database)"
        self.init(name: name, model: model, externalStore: description) {
            try PostgresObjectStore(configuration: configuration, model: model)
        }
    }
}
