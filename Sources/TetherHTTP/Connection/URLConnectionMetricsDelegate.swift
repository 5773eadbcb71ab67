import Foundation

/// A ``URLConnection`` delegate that also receives the load's ``URLConnectionMetrics``, as `URLSessionTaskDelegate`'s
/// `urlSession(_:task:didFinishCollecting:)` does.
///
/// Adopt it (beside ``URLConnectionDataDelegate`` or on its own) and the connection records its metrics: the dates
/// and byte counts of every transaction. A connection whose delegate does not adopt it records nothing, so the
/// others pay nothing for the feature.
public protocol URLConnectionMetricsDelegate: URLConnectionDelegate {
    /// Tells the delegate what the load did, once, on the delivery target, just before its last message
    /// (`connectionDidFinishLoading(_:)` or `connection(_:didFailWithError:)`).
    ///
    /// Not called after ``URLConnection/cancel()``, nor when the load stops silently (canonicalisation returned
    /// nil), as no last message follows then.
    ///
    /// - Parameters:
    ///   - connection: The connection whose load ends.
    ///   - metrics: One transaction per request–response exchange (redirect hops and retries with credentials
    ///     included), or one `.localCache` transaction for a response served from the cache.
    func connection(_ connection: URLConnection, didFinishCollecting metrics: URLConnectionMetrics)
}
