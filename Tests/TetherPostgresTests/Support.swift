import Foundation
import Testing
import TetherPostgres
import TetherStore
import TetherTestSupport

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
