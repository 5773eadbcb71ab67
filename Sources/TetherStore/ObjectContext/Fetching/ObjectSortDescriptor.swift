/// Orders fetched objects by one attribute.
///
/// Values of the same type are compared (strings by Unicode scalar order, case-sensitive); `nil` sorts first when
/// ascending; ties keep insertion order.
public struct ObjectSortDescriptor: Sendable, Hashable {
    /// The attribute to sort by.
    public var key: String
    /// Ascending (default) or descending.
    public var ascending: Bool

    /// Creates a sort descriptor.
    /// - Parameters:
    ///   - key: The attribute to sort by.
    ///   - ascending: The direction; default ascending.
    public init(key: String, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }
}
