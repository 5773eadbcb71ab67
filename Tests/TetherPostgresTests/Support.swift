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
