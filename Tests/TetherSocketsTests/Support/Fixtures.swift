import Foundation
import NIOCore
import NIOPosix
import Testing
import TetherSockets

/// A delegate-face client connected to a raw POSIX peer, for byte-exact tests.
struct RawConnection {
    let socket: GCDAsyncSocket
    let recorder: SocketRecorder
    let peer: RawPeer
    let listener: RawListener

    func close() {
        socket.disconnect()
        peer.close()
        listener.close()
    }
}

func connectToRawPeer(
    delivery: GCDAsyncSocket.CallbackDelivery = .delegateQueue,
    group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
    configure: (GCDAsyncSocket) -> Void = { _ in }
) async throws -> RawConnection {
    let listener = try RawListener()
    let recorder = SocketRecorder(label: "client")
    if delivery == .eventLoop { recorder.checksQueue = false }
    let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue, eventLoopGroup: group)
    socket.callbackDelivery = delivery
    configure(socket)
    try socket.connect(toHost: "127.0.0.1", onPort: listener.port, withTimeout: 5)
    let peer = try await onThread { listener.accept() }
    try await recorder.wait { $0.contains { if case .connected = $0 { true } else { false } } }
    return RawConnection(socket: socket, recorder: recorder, peer: peer, listener: listener)
}

/// Connects a raw client to a raw listener and makes a delegate-face socket adopt the client's descriptor; the
/// connection's peer is the listener's side.
func adoptConnectedDescriptor() async throws -> RawConnection {
    let listener = try RawListener()
    let client = try await onThread { try RawPeer.connect(port: listener.port) }
    let peer = try await onThread { listener.accept() }
    let recorder = SocketRecorder()
    let socket = try GCDAsyncSocket(fromConnectedSocketFD: client.fd, delegate: recorder, delegateQueue: recorder.queue)
    client.release()
    return RawConnection(socket: socket, recorder: recorder, peer: peer, listener: listener)
}

/// A delegate-face listener and a delegate-face client connected to it.
struct SocketPair {
    let listener: GCDAsyncSocket
    let listenerRecorder: SocketRecorder
    let client: GCDAsyncSocket
    let clientRecorder: SocketRecorder
    let server: GCDAsyncSocket

    func close() {
        client.disconnect()
        server.disconnect()
        listener.disconnect()
    }
}

func makeSocketPair(host: String = "127.0.0.1") async throws -> SocketPair {
    let listenerRecorder = SocketRecorder(label: "listener")
    let listener = GCDAsyncSocket(delegate: listenerRecorder, delegateQueue: listenerRecorder.queue)
    try listener.accept(onInterface: host, port: 0)
    let clientRecorder = SocketRecorder(label: "client")
    let client = GCDAsyncSocket(delegate: clientRecorder, delegateQueue: clientRecorder.queue)
    try client.connect(toHost: host, onPort: listener.localPort, withTimeout: 5)
    try await listenerRecorder.wait { $0.contains(.accepted) }
    try await clientRecorder.wait { $0.contains { if case .connected = $0 { true } else { false } } }
    return SocketPair(
        listener: listener,
        listenerRecorder: listenerRecorder,
        client: client,
        clientRecorder: clientRecorder,
        server: listenerRecorder.acceptedSockets[0]
    )
}

extension Data {
    init(_ text: String) { self = Data(text.utf8) }
}

/// Expects `body` to throw an ``GCDAsyncSocketError`` with `code`; returns it.
@discardableResult
func expectSocketError(
    _ code: GCDAsyncSocketError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) -> GCDAsyncSocketError? {
    let error = #expect(throws: GCDAsyncSocketError.self, sourceLocation: sourceLocation) { try body() }
    #expect(error?.code == code, sourceLocation: sourceLocation)
    return error
}

/// An async-face connection to a raw POSIX peer.
func connectAsyncToRawPeer(
    on group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
) async throws -> (TCPConnection, RawPeer, RawListener) {
    let listener = try RawListener()
    async let accepted = onThread { listener.accept() }
    let connection = try await TCPConnection.connect(
        host: "127.0.0.1",
        port: Int(listener.port),
        timeout: .seconds(5),
        on: group
    )
    return (connection, try await accepted, listener)
}
