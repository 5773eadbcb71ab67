import Foundation
import Testing
import TetherPostgres
import TetherStore
import TetherTestSupport

/// Skips a suite where PostgreSQL is not installed, printing why; CI installs it (.ci/run), so it never skips there.
let needsPostgreSQL = ConditionTrait.enabled(
    if: PostgresTestServer.isInstalled,
    Comment(rawValue: PostgresTestServer.unavailableReason)
)

/// The URL of a new, empty database on the process's PostgreSQL test server.
func freshDatabase() async throws -> String {
    try await PostgresTestServer.shared.makeDatabase()
}

/// A configuration for `url` whose calls give up on the pool after `timeout`.
func configuration(_ url: String, timeout: Duration = .seconds(10)) throws -> PostgresConfiguration {
    var configuration = try PostgresConfiguration(url: url)
    configuration.connectionTimeout = timeout
    return configuration
}

/// Expects `body` to throw a `StoreError` with `code`; returns it.
@discardableResult
func expectStoreError<T>(
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
