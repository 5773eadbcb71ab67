import PostgresNIO
import TetherStore

/// SQLSTATE `unique_violation`.
let uniqueViolation = "23505"

/// Maps an error of postgres-nio to a `StoreError`, as `SQLiteStore` maps SQLite's: a unique-key violation →
/// `.duplicateID`; a serialization failure or deadlock (another writer won) → `.conflict`; a row that does not decode
/// → `.corruptData`; anything else (refused connection, authentication, no such database, a lost connection, a
/// server error) → `.io`, with the server's message and the original error.
func postgresStoreError(_ error: any Error, _ message: String) -> StoreError {
    if let error = error as? StoreError { return error }
    if error is PostgresDecodingError {
        return StoreError(code: .corruptData, message: "\(message): a column does not decode", underlying: error)
    }
    guard let error = error as? PSQLError else {
        return StoreError(code: .io, message: message, underlying: error)
    }
    if let state = error.serverInfo?[.sqlState] {
        let serverMessage = error.serverInfo?[.message] ?? ""
        switch state {
        case uniqueViolation:
            return StoreError(code: .duplicateID, message: "\(message): \(serverMessage)", underlying: error)
        case "40001", "40P01":
            return StoreError(code: .conflict, message: "\(message): \(serverMessage)", underlying: error)
        default:
            return StoreError(code: .io, message: "\(message): \(serverMessage) (SQLSTATE \(state))", underlying: error)
        }
    }
    let cause = error.underlying.map { " (\($0))" } ?? ""
    return StoreError(code: .io, message: "\(message): \(error.code)\(cause)", underlying: error)
}
