import Foundation
import NIOCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The observer of a background revalidation (a `stale-while-revalidate` hit): it lets the load store what it gets
/// and ignores everything else.
final class BackgroundRevalidation: LoadObserver {
    func loadDidReceive(_ response: HTTPURLResponse) async throws {}
    func loadDidReceive(_ data: ByteBuffer) async throws {}
    func loadDidFinish() async {}
    func loadDidFail(_ error: URLError) async {}
}
