public import Foundation
import NIOCore
import NIOPosix
import TetherConcurrency

#if canImport(Glibc)
import CNIOLinux
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension GCDAsyncSocket {
    // MARK: accepting

    /// Listens on `port` on every interface (IPv4 and IPv6 as enabled); 0 picks a free port (see ``localPort``).
    /// - Throws: `.badConfig` (no delegate, already started, both families off) or a POSIX error from binding.
    public func accept(onPort port: UInt16) throws {
        try accept(onInterface: nil, port: port)
    }

    /// Listens on `port` of one interface (`"lo"`, `"127.0.0.1"`, `"localhost"`, …; nil = every interface).
    ///
    /// With both families enabled there is one IPv4 and one IPv6 (`IPV6_V6ONLY`) socket on the same port. Accepted
    /// sockets are connected at once, inherit the delegate, delegate queue and callback delivery (nothing else),
    /// and are handed over through `socket(_:didAcceptNewSocket:)`.
    public func accept(onInterface interface: String?, port: UInt16) throws {
        let configuration: Configuration = try state.withLock { s in
            try checkStartable(s, action: "accept")
            return s.configuration
        }
        let resolved =
            try InterfaceResolver.resolve(interface, defaultPort: Int(port))
            ?? InterfaceResolver.Resolved(
                ipv4: try? SocketAddress(ipAddress: "0.0.0.0", port: Int(port)),
                ipv6: try? SocketAddress(ipAddress: "::", port: Int(port)),
                port: Int(port),
                fixesPort: false
            )
        var targets: [SocketAddress] = []
        if configuration.isIPv4Enabled, let v4 = resolved.ipv4 { targets.append(v4) }
        if configuration.isIPv6Enabled, let v6 = resolved.ipv6 { targets.append(v6) }
        guard !targets.isEmpty else {
            throw GCDAsyncSocketError.badParam("The interface has no address of an enabled family")
        }
        var descriptors: [(Int32, SocketAddress)] = []
        do {
            var chosenPort = Int(port)
            for var target in targets {
                if chosenPort != 0 && target.port != chosenPort {
                    target.port = chosenPort
                }
                let fd = try ListeningSocket.open(target)
                let local: SocketAddress
                do {
                    local = try SocketAddress(localAddressOf: fd)
                } catch {
                    _ = close(fd)
                    throw error
                }
                descriptors.append((fd, local))
                chosenPort = descriptors.last!.1.port ?? chosenPort
            }
        } catch {
            for (fd, _) in descriptors { _ = close(fd) }
            throw error
        }
        try startListening(descriptors: descriptors, path: nil)
    }

    /// Listens on a unix-domain socket at `url`'s path; a file already there is removed first.
    public func accept(on url: URL) throws {
        try state.withLock { s in try checkStartable(s, action: "accept") }
        let path = url.path
        guard !path.isEmpty else { throw GCDAsyncSocketError.badParam("Invalid unix domain socket url.") }
        if FileManager.default.fileExists(atPath: path) {
            do {
                try FileManager.default.removeItem(atPath: path)
            } catch {
                throw GCDAsyncSocketError(
                    code: .other,
                    message: "Could not remove previous unix domain socket at given url.",
                    underlying: error
                )
            }
        }
        let address: SocketAddress
        do {
            address = try SocketAddress(unixDomainSocketPath: path)
        } catch {
            throw GCDAsyncSocketError.badParam("Invalid unix domain socket url.")
        }
        let fd = try ListeningSocket.open(address)
        try startListening(descriptors: [(fd, address)], path: path)
    }

    private func startListening(descriptors: [(Int32, SocketAddress)], path: String?) throws {
        let listenerLoop = eventLoopGroup.next()
        let started: (UInt64, CallbackDelivery)? = try state.withLock { s in
            do {
                try checkStartable(s, action: "accept")
            } catch {
                for (fd, _) in descriptors { _ = close(fd) }
                throw error
            }
            let life = s.lifecycle.startListening()
            s.delivery = s.configuration.callbackDelivery
            s.listenerAddresses = descriptors.map(\.1)
            s.listenerPath = path
            s.listenerLoop = listenerLoop
            return (life, s.delivery)
        }
        guard let (life, _) = started else { return }
        for (fd, _) in descriptors {
            ServerBootstrap(group: listenerLoop, childGroup: eventLoopGroup)
                .serverChannelOption(.backlog, value: ListeningSocket.backlog)
                .engineChildChannelOptions()
                .serverChannelInitializer { channel in
                    // NIO's `withBoundSocket` calls `listen` again on the descriptor when it makes the channel, with
                    // its default backlog of 128 (the option above is stored, not applied, once the channel exists).
                    // Listening once more restores the original's 1024, so that a burst of connects is not cut down to
                    // 129 queued clients whose SYNs beyond that are dropped and retried a second later.
                    channel.eventLoop.makeCompletedFuture {
                        guard listen(fd, ListeningSocket.backlog) == 0 else {
                            throw GCDAsyncSocketError.posix(errno, function: "listen")
                        }
                    }
                }
                .childChannelInitializer { [weak self] channel in
                    channel.eventLoop.makeCompletedFuture {
                        // A listener whose socket was released accepts nothing more (its channel is closing).
                        guard let self else { throw ChannelError.ioOnClosedChannel }
                        try self.adoptAccepted(channel, listenerLife: life)
                    }
                }
                .withBoundSocket(fd)
                .whenComplete { [weak self] result in
                    guard let self else {
                        // Released while the listener was being made: nobody will ever close it.
                        if case .success(let listener) = result { listener.close(promise: nil) }
                        return
                    }
                    switch result {
                    case .success(let listener):
                        let keep = state.withLock { s in
                            guard s.lifecycle.isCurrent(life: life) else { return false }
                            s.listeners.append(listener)
                            return true
                        }
                        if !keep { listener.close(promise: nil) }
                    case .failure(let error):
                        lifeEnded(life, error: .wrapping(error, function: "listen"))
                    }
                }
        }
    }

    /// On the child's loop: wraps an accepted channel in a new socket and tells the listener's delegate.
    private func adoptAccepted(_ channel: any Channel, listenerLife: UInt64) throws {
        let inherited: ((any GCDAsyncSocketDelegate)?, DispatchQueue?, CallbackDelivery, (any EventLoop)?, Bool)? =
            state.withLock { s in
                guard s.lifecycle.isCurrent(life: listenerLife) else { return nil }
                return (
                    s.delegate, s.delegateQueue, s.delivery, s.listenerLoop,
                    s.configuration.closesAtEndOfStreamWithUnreadBytes
                )
            }
        guard let (delegate, queue, delivery, listenerLoop, closesAtEndOfStream) = inherited else {
            throw ChannelError.ioOnClosedChannel
        }
        let child = GCDAsyncSocket(
            delegate: delegate,
            delegateQueue: queue,
            eventLoopGroup: eventLoopGroup,
            logger: logger
        )
        let liveness = state.withLock { $0.configuration.liveness }
        let adapter = child.state.withLock { s -> EngineAdapter in
            s.configuration.liveness = liveness
            s.configuration.callbackDelivery = delivery
            s.configuration.closesAtEndOfStreamWithUnreadBytes = closesAtEndOfStream
            let life = s.lifecycle.startConnected()
            s.delivery = delivery
            s.channel = channel
            s.remoteAddress = channel.remoteAddress
            s.localAddress = channel.localAddress
            return child.makeEngine(&s, life: life, loop: channel.eventLoop, reportsConnect: false)
        }
        // The engine joins the pipeline before the delegate hears of the socket: a delegate that lets it go at once
        // (the RunLoop face's, whose socket can be released on this loop while the accept is delivered) closes it
        // inline, and the close must find the channel to close. (Added after, the engine was already closed and gone,
        // and the connection stayed open with nobody to close it.)
        guard let engine = adapter.engineBox else { throw ChannelError.ioOnClosedChannel }
        try channel.pipeline.syncOperations.addHandler(engine)
        // In event-loop delivery the listener's delegate is called on the listener's loop, never on the child's:
        // children run on every loop of the group, and their accepts must not reach the delegate at once.
        if delivery == .eventLoop, let listenerLoop, !listenerLoop.inEventLoop {
            listenerLoop.execute {
                self.deliver(life: listenerLife) { sock, delegate in delegate.socket(sock, didAcceptNewSocket: child) }
            }
        } else {
            deliver(life: listenerLife) { sock, delegate in delegate.socket(sock, didAcceptNewSocket: child) }
        }
    }
}

/// Listening sockets made with plain system calls, so that bind errors throw synchronously and a listener accepts
/// connections as soon as `accept` returns.
enum ListeningSocket {
    /// The kernel's queue of connections not yet accepted, as the original's `listen(fd, 1024)`.
    static let backlog: Int32 = 1024

    static func open(_ address: SocketAddress) throws -> Int32 {
        let family: Int32
        switch address.protocol {
        case .inet: family = AF_INET
        case .inet6: family = AF_INET6
        default: family = AF_UNIX
        }
        #if canImport(Glibc) || canImport(Musl)
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = socket(family, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw GCDAsyncSocketError.posix(errno, function: "socket") }
        var one: Int32 = 1
        if family != AF_UNIX {
            guard setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                let error = GCDAsyncSocketError.posix(errno, function: "setsockopt")
                _ = close(fd)
                throw error
            }
        }
        if family == AF_INET6 {
            // Linux binds IPv6 wildcards dual-stack; the original's separate IPv4 socket needs IPv6-only here.
            guard setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size)) == 0
            else {
                let error = GCDAsyncSocketError.posix(errno, function: "setsockopt")
                _ = close(fd)
                throw error
            }
        }
        let bound = address.withSockAddr { pointer, length in bind(fd, pointer, socklen_t(length)) }
        guard bound == 0 else {
            let error = GCDAsyncSocketError.posix(errno, function: "bind")
            _ = close(fd)
            throw error
        }
        guard listen(fd, backlog) == 0 else {
            let error = GCDAsyncSocketError.posix(errno, function: "listen")
            _ = close(fd)
            throw error
        }
        return fd
    }
}
