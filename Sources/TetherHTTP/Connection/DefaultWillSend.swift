import TetherConcurrency

/// The delegate types seen answering the canonical `willSend` with the default implementation. A type's
/// implementation never changes, so a later load of a delegate of such a type starts at once, without a round trip
/// to the delegate queue to ask what the default would answer.
enum DefaultWillSend {
    private static let types = LockedBox<Set<ObjectIdentifier>>([])

    static func note(_ type: Any.Type) {
        self.types.withLock { _ = $0.insert(ObjectIdentifier(type)) }
    }

    static func isDefault(for type: Any.Type) -> Bool {
        self.types.withLock { $0.contains(ObjectIdentifier(type)) }
    }
}
