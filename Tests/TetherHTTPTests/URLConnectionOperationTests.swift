import Foundation
import Testing
import TetherConcurrency

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct URLConnectionOperationTests {
    let server: TestServer

    init() async throws {
        server = try await TestServer.http()
    }

    @Test func operationsRunInALimitedQueueAndCompleteAfterFinishing() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 2
        let finished = NSLockedCounter()
        let all = Signal<Bool>()
        let operations = (0..<6).map { index in
            URLConnectionOperation(
                request: request(self.server.url("/chunked?n=\(index + 1)")),
                configuration: .uncached
            )
        }
        for operation in operations {
            let box = UncheckedSendableBox(operation)
            operation.completionBlock = {
                #expect(box.value.isFinished)
                #expect(!box.value.isExecuting)
                finished.add(1, chunk: true)
                if finished.chunks == 6 { all.fulfil(true) }
            }
        }
        for operation in operations { queue.addOperation(operation) }
        _ = try await all.wait()
        for (index, operation) in operations.enumerated() {
            #expect(operation.error == nil)
            #expect(
                String(decoding: operation.responseData ?? Data(), as: UTF8.self)
                    == (0...index).map { "chunk-\($0);" }.joined()
            )
            #expect((operation.response as? HTTPURLResponse)?.statusCode == 200)
        }
    }

    @Test func cancellingFinishesWithCancelled() async throws {
        let operation = URLConnectionOperation(
            request: request(self.server.url("/stallhead?for=10")),
            configuration: .uncached
        )
        let done = Signal<Bool>()
        operation.completionBlock = { done.fulfil(true) }
        let queue = OperationQueue()
        queue.addOperation(operation)
        operation.cancel()
        _ = try await done.wait()
        #expect(operation.isFinished)
        #expect((operation.error as? URLError)?.code == .cancelled)
        #expect(operation.responseData == nil)
    }

    @Test func aFailingLoadReportsItsError() async throws {
        let operation = URLConnectionOperation(request: request(URL(string: "http://127.0.0.1:\(try closedPort())/")!))
        let done = Signal<Bool>()
        operation.completionBlock = { done.fulfil(true) }
        OperationQueue().addOperation(operation)
        _ = try await done.wait()
        #expect((operation.error as? URLError)?.code == .cannotConnectToHost)
    }

    /// As on Apple's platforms (and unlike swift-corelibs-foundation's `Operation`), the completion block is let go
    /// once it has begun: a block that uses its own operation, the usual way to read the result, does not keep the
    /// operation, its response and its body alive for the life of the process.
    @Test func anOperationWhoseCompletionBlockUsesItIsReleasedOnceItFinished() async throws {
        let released = Signal<Bool>()
        let done = Signal<Bool>()
        weak var weakOperation: URLConnectionOperation?
        do {
            let operation = URLConnectionOperation(
                request: request(self.server.url("/chunked?n=1")),
                configuration: .uncached
            )
            let sentinel = ReleaseSentinel { released.fulfil(true) }
            operation.completionBlock = {
                withExtendedLifetime(sentinel) {}
                #expect(operation.responseData != nil)
                done.fulfil(true)
            }
            weakOperation = operation
            OperationQueue().addOperation(operation)
        }
        _ = try await done.wait()
        // The sentinel goes when the block goes: the block (and with it the operation) was let go.
        _ = try await released.wait()
        #expect(weakOperation == nil)
    }
}

/// Calls `onRelease` when it is deinitialized: a test waits for a closure that holds it to be let go.
private final class ReleaseSentinel: Sendable {
    private let onRelease: @Sendable () -> Void
    init(_ onRelease: @escaping @Sendable () -> Void) { self.onRelease = onRelease }
    deinit { onRelease() }
}
