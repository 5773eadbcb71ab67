public import Foundation
import NIOCore
import TetherConcurrency

extension AsyncUdpSocket {
    // MARK: sending

    /// Queues a datagram for the connected peer; the result arrives as `didSendDataWithTag` or
    /// `didNotSendDataWithTag`. Sends go one at a time, in order; a send's error never closes the socket.
    /// - Parameters:
    ///   - data: one datagram.
    ///   - timeout: seconds the send may wait for the kernel once it is the current send; negative: no timeout.
    ///     On expiry: `didNotSendDataWithTag` with ``AsyncUdpSocketError/Code/sendTimeoutError`` (4).
    ///   - tag: your number for the callback.
    /// - Returns: false (nothing queued, no callback) for empty data, on a closed socket, after a `closeAfter…`, or
    ///   when the socket is not connected.
    @discardableResult
    public func send(_ data: Data, withTimeout timeout: TimeInterval, tag: Int) -> Bool {
        guard !data.isEmpty, core.isConnected(), admitSend() else { return false }
        core.send(data, withTimeout: timeout, tag: tag)
        driveReceives()
        return true
    }

    /// Queues a datagram for `host` (a name or a numeric address, resolved now, synchronously: IPv4 when the name
    /// has an IPv4 address and the socket an IPv4 socket, else IPv6) on an unconnected socket.
    /// - Parameters:
    ///   - data: one datagram.
    ///   - host: where to.
    ///   - port: the peer's port.
    ///   - timeout: as ``send(_:withTimeout:tag:)``.
    ///   - tag: your number for the callback.
    /// - Returns: false (nothing queued, no callback) for empty data, on a closed socket, after a `closeAfter…`, on a
    ///   connected socket, or when `host` does not resolve to a family the socket has (the error is not reported, as
    ///   the original).
    @discardableResult
    public func send(
        _ data: Data,
        toHost host: String,
        port: UInt16,
        withTimeout timeout: TimeInterval,
        tag: Int
    ) -> Bool {
        guard !data.isEmpty, !core.isConnected(), !isClosed() else { return false }
        guard let addresses = try? Self.resolve(host, port: Int(port)) else { return false }
        let v4 = core.isIPv4() ? addresses.first { $0.protocol == .inet } : nil
        let v6 = core.isIPv6() ? addresses.first { $0.protocol == .inet6 } : nil
        guard let address = v4 ?? v6 else { return false }
        return send(data, to: address, timeout: timeout, tag: tag)
    }

    /// Queues a datagram for `sockaddr` bytes (a 16-byte `sockaddr_in` or a 28-byte `sockaddr_in6`) on an
    /// unconnected socket.
    /// - Parameters:
    ///   - data: one datagram.
    ///   - remoteAddr: the peer's `sockaddr` bytes.
    ///   - timeout: as ``send(_:withTimeout:tag:)``.
    ///   - tag: your number for the callback.
    /// - Returns: false (nothing queued, no callback) as ``send(_:toHost:port:withTimeout:tag:)``, and for bytes that
    ///   are not an address or whose family the socket no longer has.
    @discardableResult
    public func send(_ data: Data, toAddress remoteAddr: Data, withTimeout timeout: TimeInterval, tag: Int) -> Bool {
        guard !data.isEmpty, !core.isConnected() else { return false }
        guard let address = Self.address(remoteAddr) else { return false }
        guard address.protocol == .inet ? core.isIPv4() : core.isIPv6() else { return false }
        return send(data, to: address, timeout: timeout, tag: tag)
    }

    private func send(_ data: Data, to address: SocketAddress, timeout: TimeInterval, tag: Int) -> Bool {
        guard admitSend() else { return false }
        core.send(data, toAddress: address.sockaddrData, withTimeout: timeout, tag: tag)
        driveReceives()
        return true
    }

    /// Counts a send in (for `closeAfterSending`) unless the socket is closed or closing; a send binds the socket.
    private func admitSend() -> Bool {
        state.withLock { s in
            guard !s.isClosed, s.closeAfter.isEmpty else { return false }
            s.pendingSends += 1
            s.didBind = true
            return true
        }
    }

    /// From the core (its event loop): a send's result, delivered on the run loop.
    func sendFinished(tag: Int, error: (any Error)?) {
        // One closure per datagram (``post(_:)`` would wrap a second one around it).
        mailbox.post { [weak self] in
            guard let self, !self.isClosed() else { return }
            self.deliverSendResult(tag: tag, error: error)
        }
    }

    private func deliverSendResult(tag: Int, error: (any Error)?) {
        let delegate = state.withLock { s in
            s.pendingSends -= 1
            return s.delegate
        }
        if let error {
            delegate?.onUdpSocket(self, didNotSendDataWithTag: tag, dueToError: error)
        } else {
            delegate?.onUdpSocket(self, didSendDataWithTag: tag)
        }
        closeIfDrained()
    }

    /// `sockaddr` bytes of the original's two lengths (16, 28) and a matching family, else nil.
    static func address(_ bytes: Data) -> SocketAddress? {
        guard let address = SocketAddress(sockaddrData: bytes) else { return nil }
        switch (bytes.count, address.protocol) {
        case (16, .inet), (28, .inet6): return address
        default: return nil
        }
    }
}
