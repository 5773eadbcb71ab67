import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing

@testable import TetherSockets

@Suite(.timeLimit(.minutes(1)))
struct TLSContextCacheTests {
    /// The context is built while the connection's loop is held: it cannot have been built on that loop.
    @Test func aContextIsBuiltOffTheEventLoopAndThenShared() async throws {
        var settings = TLSSettings.client()
        settings.applicationProtocols = ["tether-test-\(UUID().uuidString)"]  // a key no other test uses
        // A loop of its own: holding one of the shared group's would stall every other test on it.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { group.shutdownGracefully { _ in } }
        let loop = group.next()
        let blocker = await LoopBlocker.hold(loop)
        let built = TLSContextCache.context(settings: settings, verification: .fullVerification, on: loop)
        while !TLSContextCache.isCached(settings: settings, verification: .fullVerification) {
            await Task.yield()
        }
        blocker.unblock()
        let first = try await built.get()
        let second = try await TLSContextCache.context(settings: settings, verification: .fullVerification, on: loop)
            .get()
        #expect(first === second)
    }
}
