import NIOCore
import NIOPosix
import Testing
import TetherStore
import TetherTestSupport

@testable import TetherPostgres

/// The bridge that lets the synchronous object context wait for PostgreSQL: it refuses to block an event loop.
@Suite(.timeLimit(.minutes(1)))
struct BlockingBridgeTests {
    @Test func waitingOnAnEventLoopIsAnInvalidArgumentAndRunsNothing() async throws {
        let ran = LockedRan()
        let outcome = try await MultiThreadedEventLoopGroup.singleton.next().submit { () -> StoreError.Code? in
            do {
                _ = try BlockingBridge.shared.wait { ran.mark() }
                return nil
            } catch let error as StoreError {
                return error.code
            } catch {
                return .io
            }
        }.get()
        #expect(outcome == .invalidArgument)
        #expect(!ran.value)
        // Off the event loop, the same call runs.
        try await Task.detached { try BlockingBridge.shared.wait { ran.mark() } }.value
        #expect(ran.value)
    }
}
