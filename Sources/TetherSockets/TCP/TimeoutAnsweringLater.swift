import Foundation

/// A delegate that answers a timeout question later, from another thread: the RunLoop-era face asks its own
/// delegate on the socket's run loop, so it cannot answer inline on the event loop. `answer` takes the extension
/// in seconds (≤ 0: time out now); the first call counts.
protocol TimeoutAnsweringLater: AnyObject {
    func socket(
        _ sock: GCDAsyncSocket,
        shouldTimeout kind: SocketEngine.OperationKind,
        tag: Int,
        elapsed: TimeInterval,
        bytesDone: UInt,
        answer: @escaping @Sendable (TimeInterval) -> Void
    )
}
