import Foundation
import NIOCore
import TetherConcurrency

/// The RunLoop-era UDP face's adapter on the engine: the delegate of the ``GCDAsyncUdpSocket`` core an
/// ``AsyncUdpSocket`` owns (callbacks inline on the core's event loop), translating the core's events for the face:
/// send results and datagrams go to the face (which posts them to its run loop), and a connect's result wakes the
/// caller blocked in the face's synchronous `connect`.
final class AsyncUdpSocketBridge: GCDAsyncUdpSocketDelegate, Sendable {
    /// Where a synchronous connect waits for the core's asynchronous answer.
    final class ConnectWaiter: Sendable {
        private let result = LockedBox<Result<Void, any Error>?>(nil)
        private let done = DispatchSemaphore(value: 0)

        func finish(_ outcome: Result<Void, any Error>) {
            let first = result.withLock { r -> Bool in
                guard r == nil else { return false }
                r = outcome
                return true
            }
            if first { done.signal() }
        }

        /// Blocks the calling thread (never an event loop) until the core answered.
        func wait() throws {
            done.wait()
            try result.withLock { $0 }?.get()
        }
    }

    private struct State {
        weak var face: AsyncUdpSocket?
        var connectWaiter: ConnectWaiter?
        /// The last sender's `sockaddr` bytes and the host and port made of them (a peer usually sends again).
        var lastSender: (address: Data, host: String, port: UInt16)?
    }

    private let state = LockedBox(State())

    /// The face events go to (held weakly: the face owns the bridge).
    var face: AsyncUdpSocket? {
        get { state.withLock { $0.face } }
        set { state.withLock { $0.face = newValue } }
    }

    /// Arms `waiter` for the next connect answer.
    func expectConnect(_ waiter: ConnectWaiter) {
        state.withLock { $0.connectWaiter = waiter }
    }

    private func takeConnectWaiter() -> ConnectWaiter? {
        state.withLock { s in
            defer { s.connectWaiter = nil }
            return s.connectWaiter
        }
    }

    // MARK: GCDAsyncUdpSocketDelegate (on the core's event loop)

    func udpSocket(_ sock: GCDAsyncUdpSocket, didConnectToAddress address: Data) {
        takeConnectWaiter()?.finish(.success(()))
    }

    func udpSocket(_ sock: GCDAsyncUdpSocket, didNotConnect error: (any Error)?) {
        let failure = AsyncUdpSocketError(.cfSocketError, underlying: Self.systemError(error))
        takeConnectWaiter()?.finish(.failure(failure))
    }

    func udpSocket(_ sock: GCDAsyncUdpSocket, didSendDataWithTag tag: Int) {
        face?.sendFinished(tag: tag, error: nil)
    }

    func udpSocket(_ sock: GCDAsyncUdpSocket, didNotSendDataWithTag tag: Int, dueToError error: (any Error)?) {
        let reported: any Error
        if let own = error as? GCDAsyncUdpSocketError, own.code == .sendTimeout {
            reported = AsyncUdpSocketError(.sendTimeoutError)
        } else {
            reported = Self.systemError(error) ?? AsyncUdpSocketError(.cfSocketError)
        }
        face?.sendFinished(tag: tag, error: reported)
    }

    func udpSocket(
        _ sock: GCDAsyncUdpSocket,
        didReceive data: Data,
        fromAddress address: Data,
        withFilterContext filterContext: Any?
    ) {
        let known: (host: String, port: UInt16)? = state.withLock { s in
            guard let last = s.lastSender, last.address == address else { return nil }
            return (last.host, last.port)
        }
        let host: String
        let port: UInt16
        if let known {
            (host, port) = (known.host, known.port)
        } else {
            host = GCDAsyncUdpSocket.host(fromAddress: address) ?? ""
            port = GCDAsyncUdpSocket.port(fromAddress: address)
            state.withLock { $0.lastSender = (address, host, port) }
        }
        face?.datagramArrived(AsyncUdpReceiveQueue.Datagram(data: data, host: host, port: port))
    }

    func udpSocketDidClose(_ sock: GCDAsyncUdpSocket, withError error: (any Error)?) {
        // The face reports its own close; an error close of the core is not reported (the original's errors never
        // close). A connect still waiting learns of it.
        takeConnectWaiter()?.finish(.failure(AsyncUdpSocketError(.cfSocketError, underlying: Self.systemError(error))))
    }

    /// The error as the original reported a system call's failure: the `POSIXError` (`NSPOSIXErrorDomain`, errno)
    /// behind a core error, else the error itself.
    static func systemError(_ error: (any Error)?) -> (any Error)? {
        guard let error else { return nil }
        if let own = error as? GCDAsyncUdpSocketError, let underlying = own.underlying { return underlying }
        return error
    }
}
