import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The end of a collecting load.
// Sendable: an immutable hand-over (URLResponse and the error are never changed after the load made them).
struct LoadOutcome: @unchecked Sendable {
    var response: URLResponse?
    var data: Data?
    var error: (any Error)?
    var metrics: URLConnectionMetrics?
}
