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
        let done = Signal<Bool>()
        let deallocated = Signal<Bool>()
        do {
            let operation = URLConnectionOperation(
                request: request(self.server.url("/chunked?n=1")),
                configuration: .uncached
            )
            // An operation holds its dependencies until it is deallocated: this finished one says when that happens.
            let witness = DeallocationWitness { deallocated.fulfil(true) }
            witness.start()
            operation.addDependency(witness)
            operation.completionBlock = {
                #expect(operation.responseData != nil)
                done.fulfil(true)
            }
            OperationQueue().addOperation(operation)
        }
        _ = try await done.wait()
        // Waited for, not polled: the queue and the thread that finished the operation let go of it a moment after
        // the block ran. Before the fix the block kept the operation, and this wait failed.
        _ = try await deallocated.wait()
    }
}

/// A finished operation that calls `onDeinit` when it is deinitialized. Made a dependency of another operation, it
/// goes when that operation goes (an `Operation` holds its dependencies for its whole life).
private final class DeallocationWitness: Operation, @unchecked Sendable {
    // Sendable: `onDeinit` is a constant; `Operation` guards its own state.
    private let onDeinit: @Sendable () -> Void
    init(_ onDeinit: @escaping @Sendable () -> Void) {
        self.onDeinit = onDeinit
        super.init()
    }
    deinit { onDeinit() }
}
