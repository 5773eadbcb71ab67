import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import TetherConcurrency
import TetherSockets
import TetherTestSupport

#if canImport(Glibc)
import CNIOLinux
import Glibc
#endif

/// A plain blocking POSIX peer, independent of the engine under test.
final class RawPeer: @unchecked Sendable {
    let fd: Int32
    private let closed = LockedBox(false)

    init(fd: Int32) {
        self.fd = fd
    }

    /// Closes the descriptor once: tests run in parallel, and a second close could hit a descriptor number that
    /// another test's socket reuses.
    private func closeOnce(_ body: () -> Void) {
        let first = closed.withLock { wasClosed -> Bool in
            defer { wasClosed = true }
            return !wasClosed
        }
        if first { body() }
    }

    /// Connects a blocking socket to 127.0.0.1:port.
    static func connect(port: UInt16, host: String = "127.0.0.1") throws -> RawPeer {
        let address = try SocketAddress(ipAddress: host, port: Int(port))
        let family = address.protocol == .inet ? AF_INET : AF_INET6
        let fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        precondition(fd >= 0)
        let status = address.withSockAddr { Glibc.connect(fd, $0, socklen_t($1)) }
        guard status == 0 else {
            let code = errno
            _ = Glibc.close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code)!)
        }
        return RawPeer(fd: fd)
    }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            precondition(n > 0, "send failed: \(errno)")
            offset += n
        }
    }

    func send(_ text: String) { send(Array(text.utf8)) }

    /// Reads exactly `count` bytes (blocking, with a receive timeout of 10 s).
    func receive(count: Int) -> [UInt8] {
        // A `timeval` (seconds, microseconds): see ``StreamingPeer``'s initializer.
        var timeout: (Int, Int) = (10, 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<(Int, Int)>.size))
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while result.count < count {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, min($0.count, count - result.count), 0) }
            if n <= 0 { break }
            result.append(contentsOf: chunk[0..<n])
        }
        return result
    }

    /// Reads until the peer closes (or 10 s pass).
    func receiveToEnd() -> [UInt8] {
        // A `timeval` (seconds, microseconds): see ``StreamingPeer``'s initializer.
        var timeout: (Int, Int) = (10, 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<(Int, Int)>.size))
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            result.append(contentsOf: chunk[0..<n])
        }
        return result
    }

    func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    func close() { closeOnce { _ = Glibc.close(fd) } }

    /// Sets SO_LINGER 0 so that close sends a reset.
    func reset() {
        closeOnce {
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            _ = Glibc.close(fd)
        }
    }

    /// Hands the descriptor over (to a socket that adopts it): this peer will not close it.
    func release() { closeOnce {} }

    /// Shrinks the receive buffer (so that a peer's writes stall sooner).
    func shrinkReceiveBuffer() {
        var size: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
}

/// A plain listening socket on 127.0.0.1 with a chosen backlog, accepting only when told.
final class RawListener: @unchecked Sendable {
    let fd: Int32
    let port: UInt16

    init(backlog: Int32 = 16, host: String = "127.0.0.1") throws {
        let address = try SocketAddress(ipAddress: host, port: 0)
        let family = address.protocol == .inet ? AF_INET : AF_INET6
        let fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if family == AF_INET6 {
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        _ = address.withSockAddr { Glibc.bind(fd, $0, socklen_t($1)) }
        Glibc.listen(fd, backlog)
        self.fd = fd
        port = UInt16(try SocketAddress.localPort(of: fd))
    }

    func accept() -> RawPeer {
        let client = Glibc.accept(fd, nil, nil)
        precondition(client >= 0)
        return RawPeer(fd: client)
    }

    private let closed = LockedBox(false)

    func close() {
        let first = closed.withLock { wasClosed -> Bool in
            defer { wasClosed = true }
            return !wasClosed
        }
        if first { _ = Glibc.close(fd) }
    }
}

extension SocketAddress {
    static func localPort(of fd: Int32) throws -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        if Int32(storage.ss_family) == AF_INET {
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        }
        return withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
        }
    }
}

/// Runs blocking peer work off the cooperative pool (``offPool(_:)``).
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await offPool(body)
}

/// A delegate-face echo server: every accepted socket echoes what it reads.
final class EchoServer: @unchecked Sendable {
    let recorder = SocketRecorder(label: "echo-server")
    let socket: GCDAsyncSocket

    init(interface: String? = "127.0.0.1") throws {
        socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        recorder.onAccept = { _, child in
            child.readData(withTimeout: -1, tag: 0)
        }
        recorder.onRead = { sock, data, _ in
            sock.write(data, withTimeout: -1, tag: 0)
            sock.readData(withTimeout: -1, tag: 0)
        }
        try socket.accept(onInterface: interface, port: 0)
    }

    var port: UInt16 { socket.localPort }

    func stop() {
        socket.disconnect()
        for child in recorder.acceptedSockets { child.disconnect() }
    }
}

/// A socket bound to an address but not listening: connections to it are refused, and nobody else can bind it.
final class BoundSocket: @unchecked Sendable {
    let fd: Int32

    init(host: String, port: UInt16) throws {
        let address = try SocketAddress(ipAddress: host, port: Int(port))
        let fd = socket(address.protocol == .inet ? AF_INET : AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        let status = address.withSockAddr { Glibc.bind(fd, $0, socklen_t($1)) }
        guard status == 0 else {
            let code = errno
            _ = Glibc.close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code)!)
        }
        self.fd = fd
    }

    func close() { _ = Glibc.close(fd) }
}
