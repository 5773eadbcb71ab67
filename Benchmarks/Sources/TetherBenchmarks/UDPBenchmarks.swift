import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import TetherSockets

/// Datagrams/s through an echo peer: each variant keeps `window` datagrams in flight and sends one more per reply,
/// until `count` replies came back. On loopback with 32 in flight nothing is lost; a loss stalls the window, and the
/// run fails after 60 s (reported, not hidden).
enum UDPBenchmarks {
    static let window = 32
    static let group = MultiThreadedEventLoopGroup.singleton

    static func peerAddress(_ port: Int) -> SocketAddress { try! SocketAddress(ipAddress: "127.0.0.1", port: port) }

    // MARK: raw NIO

    static func handlers(port: Int, count: Int, size: Int) async throws {
        let done = group.next().makePromise(of: Void.self)
        let channel = try await DatagramBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        WindowHandler(peer: peerAddress(port), count: count, size: size, done: done)
                    )
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let stall = channel.eventLoop.scheduleTask(in: .seconds(60)) {
            done.fail(BenchmarkError(description: "UDP run stalled: a datagram was lost"))
        }
        defer { stall.cancel() }
        try await done.futureResult.get()
        try await channel.close()
    }

    static func asyncChannel(port: Int, count: Int, size: Int) async throws {
        let channel = try await DatagramBootstrap(group: group).bind(host: "127.0.0.1", port: 0) { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>(
                    wrappingChannelSynchronously: channel
                )
            }
        }
        let peer = peerAddress(port)
        let payload = ByteBuffer(repeating: 0x44, count: size)
        try await channel.executeThenClose { inbound, outbound in
            for _ in 0..<min(window, count) {
                try await outbound.write(AddressedEnvelope(remoteAddress: peer, data: payload))
            }
            var sent = min(window, count)
            var received = 0
            for try await _ in inbound {
                received += 1
                if received == count { break }
                if sent < count {
                    sent += 1
                    try await outbound.write(AddressedEnvelope(remoteAddress: peer, data: payload))
                }
            }
        }
    }

    // MARK: Tether

    static func tetherAsync(port: Int, count: Int, size: Int) async throws {
        let socket = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let peer = peerAddress(port)
        let payload = ByteBuffer(repeating: 0x44, count: size)
        for _ in 0..<min(window, count) { try await socket.send(payload, to: peer) }
        var sent = min(window, count)
        var received = 0
        for try await _ in socket.datagrams {
            received += 1
            if received == count { break }
            if sent < count {
                sent += 1
                try await socket.send(payload, to: peer)
            }
        }
        try await socket.close()
    }

    static func tetherDelegate(
        port: Int,
        count: Int,
        size: Int,
        delivery: GCDAsyncSocket.CallbackDelivery = .delegateQueue
    ) async throws {
        let driver = UDPWindowDriver(port: port, count: count, size: size)
        try await driver.run(delivery: delivery)
    }

    /// Runs `body`, failing it when it takes more than 60 s (a lost datagram stalls the window forever).
    static func stallGuarded(_ body: @escaping @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: .seconds(60))
                throw BenchmarkError(description: "UDP run stalled: a datagram was lost")
            }
            try await group.next()
            group.cancelAll()
        }
    }
}

final class WindowHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>
    let peer: SocketAddress
    let count: Int
    let payload: ByteBuffer
    let done: EventLoopPromise<Void>
    var sent = 0
    var received = 0

    init(peer: SocketAddress, count: Int, size: Int, done: EventLoopPromise<Void>) {
        self.peer = peer
        self.count = count
        self.payload = ByteBuffer(repeating: 0x44, count: size)
        self.done = done
    }

    func channelActive(context: ChannelHandlerContext) {
        while sent < min(UDPBenchmarks.window, count) {
            sent += 1
            context.write(wrapOutboundOut(AddressedEnvelope(remoteAddress: peer, data: payload)), promise: nil)
        }
        context.flush()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received += 1
        if received == count {
            done.succeed()
        } else if sent < count {
            sent += 1
            context.write(wrapOutboundOut(AddressedEnvelope(remoteAddress: peer, data: payload)), promise: nil)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }
}

/// The delegate face: `beginReceiving`, a window of sends, one more per `didReceive`.
final class UDPWindowDriver: GCDAsyncUdpSocketDelegate, @unchecked Sendable {
    let queue = DispatchQueue(label: "benchmark.udp")
    let port: Int
    let count: Int
    let payload: Data
    var sent = 0
    var received = 0
    private let finished = NIOLockedValueBox<CheckedContinuation<Void, any Error>?>(nil)
    private var socket: GCDAsyncUdpSocket?

    init(port: Int, count: Int, size: Int) {
        self.port = port
        self.count = count
        self.payload = Data(repeating: 0x44, count: size)
    }

    func run(delivery: GCDAsyncSocket.CallbackDelivery) async throws {
        let socket = GCDAsyncUdpSocket(delegate: self, delegateQueue: queue)
        self.socket = socket
        socket.callbackDelivery = delivery
        socket.setIPv6Enabled(false)
        try socket.bind(toPort: 0, interface: "127.0.0.1")
        if delivery == .eventLoop {
            // Callbacks run on the loop: the window goes out before they can start (the replies wait in the kernel).
            while sent < min(UDPBenchmarks.window, count) { sendOne(socket) }
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            finished.withLockedValue { $0 = continuation }
            do {
                try socket.beginReceiving()
            } catch {
                finish(.failure(error))
                return
            }
            guard delivery == .delegateQueue else { return }
            queue.async { [self] in
                while sent < min(UDPBenchmarks.window, count) { sendOne(socket) }
            }
        }
        socket.close()
    }

    private func sendOne(_ socket: GCDAsyncUdpSocket) {
        sent += 1
        socket.send(payload, toHost: "127.0.0.1", port: UInt16(port), withTimeout: -1, tag: sent)
    }

    func udpSocket(
        _ sock: GCDAsyncUdpSocket,
        didReceive data: Data,
        fromAddress address: Data,
        withFilterContext filterContext: Any?
    ) {
        received += 1
        if received == count {
            finish(.success(()))
        } else if sent < count {
            sendOne(sock)
        }
    }

    func udpSocket(_ sock: GCDAsyncUdpSocket, didNotSendDataWithTag tag: Int, dueToError error: (any Error)?) {
        finish(.failure(error ?? BenchmarkError(description: "send \(tag) failed")))
    }

    private func finish(_ result: Result<Void, any Error>) {
        finished.withLockedValue { continuation in
            continuation?.resume(with: result)
            continuation = nil
        }
    }
}

/// The peer: raw NIO echoing each datagram to its sender.
final class DatagramEchoHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.write(data, promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }
}
