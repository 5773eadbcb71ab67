/// An async iterator that the operations of one session call in turn.
final class IteratorBox<Iterator: AsyncIteratorProtocol>: @unchecked Sendable {
    // Sendable: a session's operations run one after another, never at once.
    private var iterator: Iterator

    init(_ iterator: Iterator) {
        self.iterator = iterator
    }

    func next() async throws -> Iterator.Element? {
        try await iterator.next()
    }
}
