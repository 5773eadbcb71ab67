import Testing
import TetherCore

/// Records an issue unless `body` throws a ``FramingError`` with `code`.
func expectFramingError<R>(
    _ code: FramingError.Code,
    _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> R
) {
    do {
        _ = try body()
        Issue.record(
            "expected FramingError.\(code), nothing was thrown. \(comment ?? "")",
            sourceLocation: sourceLocation
        )
    } catch let error where code ~= error {
        return
    } catch {
        Issue.record("expected FramingError.\(code), got \(error). \(comment ?? "")", sourceLocation: sourceLocation)
    }
}
