import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import Testing
import TetherCore
import TetherSockets
import TetherTestSupport

// The "after" examples of the article "From GCDAsyncSocket" (TetherSockets.docc/PortingFromGCDAsyncSocket.md).
// Each block of the article marked **After** appears here line for line (`articleSnippetsAreCompiledHere` checks
// it), so every one of them compiles; the tests below run them against loopback peers where that is cheap.

// MARK: - What compiles unchanged

final class LineClient: GCDAsyncSocketDelegate {
    let socket = GCDAsyncSocket()
    let onReply: @Sendable (String) -> Void

    init(onReply: @escaping @Sendable (String) -> Void) {
        self.onReply = onReply
    }

    func start(host: String, port: UInt16) throws {
        socket.setDelegate(self, delegateQueue: DispatchQueue(label: "line-client"))
        try socket.connect(toHost: host, onPort: port, withTimeout: 5)
        socket.write(Data("HELLO\r\n".utf8), withTimeout: 5, tag: 1)
        socket.readData(to: GCDAsyncSocket.crlfData(), withTimeout: 5, tag: 2)
    }

    func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        onReply(String(decoding: data, as: UTF8.self))
        sock.disconnect()
    }

    func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {
        if let err { print("closed:", err) }
    }
}

// MARK: - Errors

enum LinkOutcome: Sendable, Equatable {
    case retryLater
    case serverDown
    case failed(String)
}

final class LinkWatcher: GCDAsyncSocketDelegate {
    let onOutcome: @Sendable (LinkOutcome) -> Void

    init(onOutcome: @escaping @Sendable (LinkOutcome) -> Void) {
        self.onOutcome = onOutcome
    }

    func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {
        guard let error = err as? GCDAsyncSocketError else { return }  // nil: our own disconnect()
        switch error.code {
        case .readTimeout:
            onOutcome(.retryLater)
        case .other where error.posixErrorCode == .ECONNREFUSED:
            onOutcome(.serverDown)
        default:
            onOutcome(.failed(error.message))
        }
    }
}

func connectReportingBadHost(_ socket: GCDAsyncSocket, host: String, port: UInt16) -> String? {
    do {
        try socket.connect(toHost: host, onPort: port, withTimeout: 5)
        return nil
    } catch GCDAsyncSocketError.Code.badParam {
        return "bad host or port"
    } catch {
        return "\(error)"
    }
}

func isOwnReadTimeout(_ err: any Error) -> Bool {
    let nsError = err as NSError
    return nsError.domain == "GCDAsyncSocketErrorDomain" && nsError.code == 4
}

// MARK: - TLS

func startClientTLS(_ sock: GCDAsyncSocket) {
    sock.startTLS(.client(peerName: "chat.example.com"))
}

func startServerTLS(_ sock: GCDAsyncSocket, certificatePath: String, keyPath: String) throws {
    let chain = try NIOSSLCertificate.fromPEMFile(certificatePath)
    let key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
    sock.startTLS(.server(certificateChain: chain, privateKey: key))
}

final class PinnedLeafClient: GCDAsyncSocketDelegate {
    let expectedLeaf: NIOSSLCertificate
    let onSecure: @Sendable () -> Void

    init(expectedLeaf: NIOSSLCertificate, onSecure: @escaping @Sendable () -> Void) {
        self.expectedLeaf = expectedLeaf
        self.onSecure = onSecure
    }

    func secure(_ sock: GCDAsyncSocket) {
        var settings = TLSSettings.client()
        settings.manuallyEvaluatesTrust = true
        sock.startTLS(settings)
    }

    func socket(
        _ sock: GCDAsyncSocket,
        didReceive trust: TLSPeerTrust,
        completionHandler: @escaping @Sendable (Bool) -> Void
    ) {
        completionHandler(trust.peerCertificates.first == expectedLeaf)
    }

    func socketDidSecure(_ sock: GCDAsyncSocket) {
        onSecure()
    }
}

// MARK: - The delegate and the socket's lifetime

final class EchoService: GCDAsyncSocketDelegate {
    let listener = GCDAsyncSocket()
    private let queue = DispatchQueue(label: "echo-service")
    private var connections: [GCDAsyncSocket] = []  // touched on `queue` only

    func start() throws -> UInt16 {
        listener.setDelegate(self, delegateQueue: queue)
        try listener.accept(onInterface: "127.0.0.1", port: 0)
        return listener.localPort
    }

    func socket(_ sock: GCDAsyncSocket, didAcceptNewSocket newSocket: GCDAsyncSocket) {
        connections.append(newSocket)  // as in the original: a socket nobody keeps closes
        newSocket.readData(withTimeout: -1, tag: 0)
    }

    func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        sock.write(data, withTimeout: -1, tag: 0)
        sock.readData(withTimeout: -1, tag: 0)
    }

    func stop() {
        queue.sync {
            listener.disconnect()
            for connection in connections { connection.disconnect() }  // releasing them would close them too
        }
    }
}

func socketWithATemporaryDelegate(queue: DispatchQueue) -> GCDAsyncSocket {
    // Wrong: nothing else holds the watcher, so the socket's weak reference is nil at once.
    GCDAsyncSocket(delegate: LinkWatcher { print($0) }, delegateQueue: queue)
}

// MARK: - What a close leaves behind

struct CloseReport: Sendable, Equatable {
    var leftover: Data
    var unansweredReads: [Int]
    var unsentWrites: [Int]
}

final class FrameReader: GCDAsyncSocketDelegate {
    let onClose: @Sendable (CloseReport) -> Void

    init(onClose: @escaping @Sendable (CloseReport) -> Void) {
        self.onClose = onClose
    }

    func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {
        guard let error = err as? GCDAsyncSocketError else { return }
        let report = CloseReport(
            leftover: error.unreadData ?? Data(),  // received, never delivered
            unansweredReads: error.pendingReadTags,  // the current read first
            unsentWrites: error.pendingWriteTags  // writes not handed to the kernel
        )
        onClose(report)
    }
}

// MARK: - Callback delivery

final class PingClient: GCDAsyncSocketDelegate {
    let socket = GCDAsyncSocket()
    let onPong: @Sendable (Data) -> Void

    init(onPong: @escaping @Sendable (Data) -> Void) {
        self.onPong = onPong
    }

    func start(port: UInt16) throws {
        socket.delegate = self
        socket.callbackDelivery = .eventLoop  // set before connect; no delegateQueue needed
        try socket.connect(toHost: "127.0.0.1", onPort: port, withTimeout: 5)
        socket.write(Data("PING\r\n".utf8), withTimeout: 5, tag: 1)
        socket.readData(to: GCDAsyncSocket.crlfData(), withTimeout: 5, tag: 2)
    }

    func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        onPong(data)  // on the socket's event loop thread: never block here
        sock.disconnect()
    }
}

// MARK: - Sendable and the main actor

@MainActor
final class ChatModel {
    let socket = GCDAsyncSocket()
    private(set) var lines: [String] = []
    var onLine: (String) -> Void = { _ in }

    func start(port: UInt16) throws {
        socket.setDelegate(self, delegateQueue: .main)
        try socket.connect(toHost: "127.0.0.1", onPort: port, withTimeout: 5)
        socket.readData(to: GCDAsyncSocket.crlfData(), withTimeout: -1, tag: 0)
    }

    func send(_ text: String) {
        let socket = socket  // GCDAsyncSocket is Sendable: capture it anywhere
        Task.detached {
            socket.write(Data((text + "\r\n").utf8), withTimeout: 5, tag: 1)
        }
    }
}

extension ChatModel: @MainActor GCDAsyncSocketDelegate {
    func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        let line = String(decoding: data, as: UTF8.self)
        lines.append(line)
        onLine(line)
        sock.readData(to: GCDAsyncSocket.crlfData(), withTimeout: -1, tag: 0)
    }
}

// MARK: - GCDAsyncUdpSocket

final class UdpPinger: GCDAsyncUdpSocketDelegate {
    let socket = GCDAsyncUdpSocket()
    let onEcho: @Sendable (Data) -> Void
    let onSendFailure: @Sendable (Int, GCDAsyncUdpSocketError) -> Void

    init(
        onEcho: @escaping @Sendable (Data) -> Void,
        onSendFailure: @escaping @Sendable (Int, GCDAsyncUdpSocketError) -> Void
    ) {
        self.onEcho = onEcho
        self.onSendFailure = onSendFailure
    }

    func start() throws {
        socket.setDelegate(self, delegateQueue: DispatchQueue(label: "pinger"))
        try socket.bind(toPort: 0, interface: "127.0.0.1")
        try socket.beginReceiving()
    }

    func ping(_ data: Data, port: UInt16, tag: Int) {
        socket.send(data, toHost: "127.0.0.1", port: port, withTimeout: 5, tag: tag)
    }

    func udpSocket(
        _ sock: GCDAsyncUdpSocket,
        didReceive data: Data,
        fromAddress address: Data,
        withFilterContext filterContext: Any?
    ) {
        onEcho(data)
    }

    func udpSocket(_ sock: GCDAsyncUdpSocket, didNotSendDataWithTag tag: Int, dueToError error: (any Error)?) {
        // Δ: only this datagram failed (EMSGSIZE, ECONNREFUSED, …); the socket stays open.
        if let error = error as? GCDAsyncUdpSocketError { onSendFailure(tag, error) }
    }
}

// MARK: - The async face (the article "From AsyncSocket (RunLoop)" shows these)

func echoOnce(port: UInt16) async throws -> String {
    let connection = try await TCPConnection.connect(host: "127.0.0.1", port: Int(port))
    try await connection.write(ByteBuffer(string: "hello\r\n"))
    let reply = try await connection.read(upTo: [0x0D, 0x0A], timeout: .seconds(5))
    try await connection.close()
    return String(buffer: reply)
}

func readFrames(port: UInt16) async throws -> [STXFrame] {
    let connection = try await TCPConnection.connect(host: "127.0.0.1", port: Int(port))
    var frames: [STXFrame] = []
    for try await frame in connection.frames(STXFrameCodec()) {  // start byte, length and CRC checked
        frames.append(frame)
    }
    try await connection.close()
    return frames
}

// MARK: - Test support

/// Values handed over by the examples' callbacks, awaited by a test (bounded; no sleeps).
final class Handoff<Value: Sendable>: Sendable {
    private let state = NIOLockedValueBox<(values: [Value], waiter: CheckedContinuation<Value, any Error>?)>(([], nil))

    /// Hands `value` to the test.
    @Sendable func put(_ value: Value) {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Value, any Error>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.values.append(value)
            return nil
        }
        waiter?.resume(returning: value)
    }

    /// The next value, in the order handed over; throws after `timeout`.
    func next(timeout: Duration = .seconds(10)) async throws -> Value {
        let timer = Task {
            try await Task.sleep(for: timeout)
            let waiter = state.withLockedValue { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(throwing: HandoffTimedOut())
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLockedValue { state -> Value? in
                if !state.values.isEmpty { return state.values.removeFirst() }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

struct HandoffTimedOut: Error {}

// MARK: - Tests

@Suite("The article \"From GCDAsyncSocket\": its after examples compile and run", .timeLimit(.minutes(2)))
struct PortingGuideExamples {
    @Test("every after block of the article is code of this file, line for line")
    func articleSnippetsAreCompiledHere() throws {
        let article = "Sources/TetherSockets/TetherSockets.docc/PortingFromGCDAsyncSocket.md"
        #expect(try ArticleSnippets.checkedBlocks(ofArticle: article).count >= 12)
        let missing = try ArticleSnippets.blocksMissing(
            fromArticle: article,
            inFiles: ["Tests/TetherSocketsTests/PortingGuideExamples.swift"]
        )
        #expect(missing.isEmpty, "not in PortingGuideExamples.swift:\n\(missing.joined(separator: "\n---\n"))")
    }

    @Test("the ported line client talks to the echo service, which keeps accepted sockets open")
    func lineClientAndEchoService() async throws {
        let service = EchoService()
        let port = try service.start()
        defer { service.stop() }
        let replies = Handoff<String>()
        let client = LineClient(onReply: replies.put)
        try client.start(host: "127.0.0.1", port: port)
        #expect(try await replies.next() == "HELLO\r\n")
    }

    @Test("a read timeout and a refused connection reach the watcher as the article says")
    func errorsByCodeAndDomain() async throws {
        let outcomes = Handoff<LinkOutcome>()
        let watcher = LinkWatcher(onOutcome: outcomes.put)

        let refused = try BoundSocket(host: "127.0.0.1", port: 0)
        defer { refused.close() }
        let refusedPort = UInt16(try SocketAddress.localPort(of: refused.fd))
        let first = GCDAsyncSocket(delegate: watcher, delegateQueue: DispatchQueue(label: "watcher-1"))
        try first.connect(toHost: "127.0.0.1", onPort: refusedPort, withTimeout: 5)
        #expect(try await outcomes.next() == .serverDown)

        let listener = try RawListener()
        defer { listener.close() }
        let second = GCDAsyncSocket(delegate: watcher, delegateQueue: DispatchQueue(label: "watcher-2"))
        try second.connect(toHost: "127.0.0.1", onPort: listener.port, withTimeout: 5)
        let peer = try await onThread { listener.accept() }
        defer { peer.close() }
        second.readData(toLength: 4, withTimeout: 0.1, tag: 1)
        #expect(try await outcomes.next() == .retryLater)
    }

    @Test("synchronous misuse is caught by code; NSError bridging keeps the domain and code")
    func synchronousErrorsAndBridging() throws {
        let holder = LineClient { _ in }
        let socket = GCDAsyncSocket(delegate: holder, delegateQueue: DispatchQueue(label: "unused"))
        #expect(connectReportingBadHost(socket, host: "", port: 80) == "bad host or port")
        #expect(isOwnReadTimeout(GCDAsyncSocketError(code: .readTimeout, message: "Read operation timed out")))
        let refused = GCDAsyncSocketError(
            code: .other,
            domain: .posix,
            message: "Error in connect() function",
            underlying: POSIXError(.ECONNREFUSED)
        )
        let bridged = refused as NSError
        #expect(bridged.domain == "GCDAsyncSocketErrorDomain")
        #expect(bridged.code == 8)
        #expect(refused.domain.rawValue == "NSPOSIXErrorDomain")
        #expect(bridged.userInfo[NSUnderlyingErrorKey] != nil)
        withExtendedLifetime(holder) {}
    }

    @Test("a delegate held by nothing else is gone at once, and connect says so")
    func weakDelegate() throws {
        let socket = socketWithATemporaryDelegate(queue: DispatchQueue(label: "weak"))
        #expect(socket.delegate == nil)
        let error = #expect(throws: GCDAsyncSocketError.self) {
            try socket.connect(toHost: "127.0.0.1", onPort: 9, withTimeout: 1)
        }
        #expect(error?.code == .badConfig)
    }

    @Test("the closing error carries the unread bytes and the dropped read's tag")
    func closeLeavesUnreadDataAndTags() async throws {
        let reports = Handoff<CloseReport>()
        let reader = FrameReader(onClose: reports.put)
        let listener = try RawListener()
        defer { listener.close() }
        let socket = GCDAsyncSocket(delegate: reader, delegateQueue: DispatchQueue(label: "frame-reader"))
        try socket.connect(toHost: "127.0.0.1", onPort: listener.port, withTimeout: 5)
        let peer = try await onThread { listener.accept() }
        defer { peer.close() }
        socket.readData(toLength: 3, withTimeout: 5, tag: 1)
        socket.readData(toLength: 10, withTimeout: 5, tag: 2)
        peer.send("abcdef")
        peer.shutdownWrite()
        #expect(
            try await reports.next() == CloseReport(leftover: Data("def".utf8), unansweredReads: [2], unsentWrites: [])
        )
    }

    @Test("event-loop delivery answers without a delegate queue")
    func eventLoopDelivery() async throws {
        let service = EchoService()
        let port = try service.start()
        defer { service.stop() }
        let pongs = Handoff<Data>()
        let client = PingClient(onPong: pongs.put)
        try client.start(port: port)
        #expect(try await pongs.next() == Data("PING\r\n".utf8))
        withExtendedLifetime(client) {}
    }

    @Test("TLS with manual trust of a known leaf, against a delegate-face server")
    func manualTrust() async throws {
        let certificates = try await TLSTestCertificates.shared()
        let serverSettings = try certificates.server()
        let listenerRecorder = SocketRecorder(label: "tls-listener")
        listenerRecorder.onAccept = { _, child in child.startTLS(serverSettings) }
        let listener = GCDAsyncSocket(delegate: listenerRecorder, delegateQueue: listenerRecorder.queue)
        try listener.accept(onInterface: "127.0.0.1", port: 0)
        defer {
            listener.disconnect()
            for child in listenerRecorder.acceptedSockets { child.disconnect() }
        }
        let secured = Handoff<Bool>()
        let client = PinnedLeafClient(expectedLeaf: try certificates.certificate("server")) { secured.put(true) }
        let socket = GCDAsyncSocket(delegate: client, delegateQueue: DispatchQueue(label: "pinned-client"))
        try socket.connect(toHost: "127.0.0.1", onPort: listener.localPort, withTimeout: 5)
        client.secure(socket)
        #expect(try await secured.next())
        #expect(socket.isSecure)
        socket.disconnect()
    }

    @Test("the TLS one-liners compile and start a handshake")
    func tlsOneLiners() async throws {
        let certificates = try await TLSTestCertificates.shared()
        let pair = try await makeSocketPair()
        defer { pair.close() }
        try startServerTLS(
            pair.server,
            certificatePath: certificates.certificatePath("server"),
            keyPath: certificates.keyPath("server")
        )
        startClientTLS(pair.client)
        // chat.example.com is not the name in the test certificate, nor is its CA trusted: the client refuses.
        let error = try #require(try await pair.clientRecorder.waitForDisconnect())
        #expect(error.domain == .tls)
    }

    @Test("a main-actor model with an isolated conformance gets its lines on the main queue")
    @MainActor
    func mainActorModel() async throws {
        let service = EchoService()
        let port = try service.start()
        defer { service.stop() }
        let lines = Handoff<String>()
        let model = ChatModel()
        model.onLine = { lines.put($0) }
        try model.start(port: port)
        model.send("hello")
        #expect(try await lines.next() == "hello\r\n")
        #expect(model.lines == ["hello\r\n"])
        model.socket.disconnect()
    }

    @Test("UDP: an echo comes back, and an oversized datagram fails alone without closing the socket")
    func udpPinger() async throws {
        let echo = try await UDPEchoPeer.start(host: "127.0.0.1")
        let echoes = Handoff<Data>()
        let failures = Handoff<Int>()
        let errors = NIOLockedValueBox<[GCDAsyncUdpSocketError]>([])
        let pinger = UdpPinger(onEcho: echoes.put) { tag, error in
            errors.withLockedValue { $0.append(error) }
            failures.put(tag)
        }
        try pinger.start()
        pinger.ping(Data(count: 70_000), port: echo.port, tag: 1)
        #expect(try await failures.next() == 1)
        #expect(errors.withLockedValue { $0.first?.posixErrorCode } == .EMSGSIZE)
        #expect(!pinger.socket.isClosed())
        pinger.ping(Data("ping".utf8), port: echo.port, tag: 2)
        #expect(try await echoes.next() == Data("ping".utf8))
        pinger.socket.close()
        await echo.stop()
    }

    @Test("the async face reads the echo and the STX frames, CRC checked by the codec")
    func asyncFace() async throws {
        let server = try EchoServer()
        defer { server.stop() }
        #expect(try await echoOnce(port: server.port) == "hello\r\n")

        let listener = try RawListener()
        defer { listener.close() }
        async let frames = readFrames(port: listener.port)
        let peer = try await onThread { listener.accept() }
        peer.send([0x02, 0x01, 0x00, 0x02, 0x00, 0x02, 0x00, 0x68, 0x69, 0xDA])
        peer.shutdownWrite()
        let received = try await frames
        peer.close()
        #expect(received == [STXFrame(destination: 1, source: 2, bytes: Array("hi".utf8))])
    }
}
