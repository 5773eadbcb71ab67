public import Testing
public import TetherStore

/// Expects `body` to throw a `StoreError` with `code`; returns it.
@discardableResult
public func expectStoreError<T>(
    _ code: StoreError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> T
) async -> StoreError? {
    do {
        _ = try await body()
        Issue.record("expected StoreError(\(code)), got success", sourceLocation: sourceLocation)
        return nil
    } catch let error as StoreError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected StoreError(\(code)), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
