/// What ``ObjectContext/fetch(_:)`` returns: objects of one entity, filtered, sorted and paged.
public struct FetchRequest: Sendable, Hashable {
    /// The entity to fetch.
    public var entityName: String
    /// The filter; `nil` (default) fetches all.
    public var predicate: ObjectPredicate?
    /// The order; empty (default) is insertion order.
    public var sortDescriptors: [ObjectSortDescriptor]
    /// At most this many objects; 0 (default) is no limit.
    public var fetchLimit: Int
    /// Skips this many objects first. Default 0.
    public var fetchOffset: Int

    /// Creates a fetch request.
    /// - Parameters:
    ///   - entityName: The entity to fetch.
    ///   - predicate: The filter; `nil` fetches all.
    ///   - sortDescriptors: The order; empty is insertion order.
    ///   - fetchLimit: The maximum count; 0 is no limit.
    ///   - fetchOffset: How many to skip first.
    public init(
        entityName: String,
        predicate: ObjectPredicate? = nil,
        sortDescriptors: [ObjectSortDescriptor] = [],
        fetchLimit: Int = 0,
        fetchOffset: Int = 0
    ) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
    }
}
