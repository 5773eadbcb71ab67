public import Testing

/// Skips a suite where PostgreSQL is not installed, printing why; CI installs it (.ci/run), so it never skips there.
public let needsPostgreSQL = ConditionTrait.enabled(
    if: PostgresTestServer.isInstalled,
    Comment(rawValue: PostgresTestServer.unavailableReason)
)
