import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import Testing
import TetherCore
import TetherSockets
import TetherTestSupport

// The "after" examples of the article "From AsyncSocket (RunLoop)" (TetherSockets.docc/PortingFromAsyncSocket.md).
// Each block of the article marked **After** appears here (or, for the async face, in PortingGuideExamples.swift)
// line for line (`articleSnippetsAreCompiledHere` checks it); the tests run them against loopback peers.

// MARK: - Run loops on Linux

/// Starts a thread that sets up its sockets, then runs its run loop until the thread is cancelled.
func startSocketThread(_ setUp: @escaping @Sendable () -> [AnyObject]) -> Thread {
    let thread = Thread {
        let owned = setUp()  // connect or accept in here: this thread's run loop becomes the sockets'
        // run(mode:before:) returns at once when the run loop has no timer or source: keep one there.
        let keepAlive = Timer(timeInterval: 1e9, repeats: true) { _ in }
        RunLoop.current.add(keepAlive, forMode: .default)
        while !Thread.current.isCancelled {
            _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.1))
        }
        keepAlive.invalidate()
        withExtendedLifetime(owned) {}  // delegates are held weakly: the thread keeps them alive
    }
    thread.start()
    return thread
}

// MARK: - The seed's echo client

final class EchoClient: AsyncSocketDelegate {
    let socket = AsyncSocket()
    let onReply: @Sendable (String) -> Void

    init(onReply: @escaping @Sendable (String) -> Void) {
        self.onReply = onReply
        socket.delegate = self
    }

    func start(host: String, port: UInt16) throws {
        try socket.connect(toHost: host, onPort: port)
        socket.write(Data("test data\r\n".utf8), withTimeout: -1, tag: 1)  // queued until connected
        socket.readData(to: AsyncSocket.crlfData(), withTimeout: 5, tag: 2)
    }

    func onSocket(_ sock: AsyncSocket, didWriteDataWithTag tag: Int) {
        print("thread \(Thread.current), onSocket \(sock) didWriteDataWithTag \(tag)")
    }

    func onSocket(_ sock: AsyncSocket, didRead data: Data, withTag tag: Int) {
        onReply(String(decoding: data, as: UTF8.self))
        sock.disconnect()
    }
}

// MARK: - Header, then body: the seed's STX frame read by tag

struct STXMessage: Sendable, Equatable {
    var destination: UInt16
    var source: UInt16
    var payload: Data
    var checksumIsValid: Bool
}

enum FrameTag {
    static let header = 1
    static let body = 2
}

final class FrameClient: AsyncSocketDelegate {
    let socket = AsyncSocket()
    let onMessage: @Sendable (STXMessage) -> Void
    private var header: [UInt8] = []

    init(onMessage: @escaping @Sendable (STXMessage) -> Void) {
        self.onMessage = onMessage
        socket.delegate = self
    }

    func start(host: String, port: UInt16) throws {
        try socket.connect(toHost: host, onPort: port)
        socket.readData(toLength: 7, withTimeout: -1, tag: FrameTag.header)  // 02 | dest | src | length
    }

    func onSocket(_ sock: AsyncSocket, didRead data: Data, withTag tag: Int) {
        switch tag {
        case FrameTag.header:
            header = [UInt8](data)
            let length = UInt(header[5]) | UInt(header[6]) << 8  // OSReadLittleInt16(bytes, 5)
            sock.readData(toLength: length + 1, withTimeout: 5, tag: FrameTag.body)  // data | CRC
        default:
            let body = [UInt8](data)
            let message = STXMessage(
                destination: UInt16(header[1]) | UInt16(header[2]) << 8,
                source: UInt16(header[3]) | UInt16(header[4]) << 8,
                payload: Data(body.dropLast()),
                checksumIsValid: CRC8.smbus.checksum(header + body.dropLast()) == body.last
            )
            onMessage(message)
            sock.readData(toLength: 7, withTimeout: -1, tag: FrameTag.header)
        }
    }
}

// MARK: - Errors, read with `err as NSError`

enum LinkEvent: Sendable, Equatable {
    case peerClosed(leftover: Data)
    case refused
    case timedOut
    case tlsFailed(code: Int)
    case failed(domain: String, code: Int)
    case closed
}

final class LinkMonitor: AsyncSocketDelegate {
    let onEvent: @Sendable (LinkEvent) -> Void

    init(onEvent: @escaping @Sendable (LinkEvent) -> Void) {
        self.onEvent = onEvent
    }

    func onSocket(_ sock: AsyncSocket, willDisconnectWithError err: (any Error)?) {
        guard let err else {
            // nil: the peer closed cleanly. unreadData() answers only inside this callback.
            return onEvent(.peerClosed(leftover: sock.unreadData() ?? Data()))
        }
        let error = err as NSError
        switch (error.domain, error.code) {
        case (AsyncSocketErrorDomain, AsyncSocketError.Code.readTimeoutError.rawValue):
            onEvent(.timedOut)
        case (NSPOSIXErrorDomain, Int(POSIXErrorCode.ECONNREFUSED.rawValue)):
            onEvent(.refused)
        case ("kCFStreamErrorDomainSSL", let status):
            onEvent(.tlsFailed(code: status))  // SecureTransport's number, e.g. -9812 unknown root
        default:
            onEvent(.failed(domain: error.domain, code: error.code))
        }
    }

    func onSocketDidDisconnect(_ sock: AsyncSocket) {
        onEvent(.closed)
    }
}

// MARK: - Misuse throws AsyncSocketException

func connectOrExplain(_ socket: AsyncSocket, port: UInt16) -> String {
    do {
        try socket.connect(toHost: "127.0.0.1", onPort: port)
        return "connecting"
    } catch let exception as AsyncSocketException {
        return exception.reason  // the original raised an NSException here: fix the call
    } catch let error as AsyncSocketError where error.code == .canceledError {
        return "vetoed by onSocketWillConnect"
    } catch {
        return "\(error)"
    }
}

final class VetoingClient: AsyncSocketDelegate {
    let allowsConnecting: Bool

    init(allowsConnecting: Bool) {
        self.allowsConnecting = allowsConnecting
    }

    func onSocketWillConnect(_ sock: AsyncSocket) -> Bool {
        // The original configured sock.getCFSocket() or its CFStreams here; on Linux all three are nil.
        allowsConnecting
    }
}

// MARK: - TLS with the kCFStreamSSL… dictionary

func startTLSCheckingTheName(_ sock: AsyncSocket) {
    sock.startTLS([
        kCFStreamSSLPeerName: "chat.example.com",
        kCFStreamSSLLevel: kCFStreamSocketSecurityLevelNegotiatedSSL,
    ])
}

func startTLSWithAnyRoot(_ sock: AsyncSocket) {
    // A self-signed test server: no chain verification, but the name is still checked (Δ).
    sock.startTLS([kCFStreamSSLAllowsAnyRoot: true, kCFStreamSSLPeerName: "localhost"])
}

func startServerTLSFromDictionary(_ sock: AsyncSocket, chain: [NIOSSLCertificate], key: NIOSSLPrivateKey) {
    sock.startTLS([
        kCFStreamSSLIsServer: true,
        kCFStreamSSLCertificates: chain,  // [NIOSSLCertificate], leaf first
        kTetherStreamSSLPrivateKey: key,  // Δ: Linux has no SecIdentity bundling the two
    ])
}

final class SecureEchoServer: AsyncSocketDelegate {
    let listener = AsyncSocket()
    let chain: [NIOSSLCertificate]
    let key: NIOSSLPrivateKey
    private var connections: [AsyncSocket] = []

    init(chain: [NIOSSLCertificate], key: NIOSSLPrivateKey) {
        self.chain = chain
        self.key = key
        listener.delegate = self
    }

    func start() throws -> UInt16 {
        try listener.accept(onInterface: "127.0.0.1", port: 0)  // on this thread's run loop
        return listener.localPort()
    }

    func onSocket(_ sock: AsyncSocket, didAcceptNewSocket newSocket: AsyncSocket) {
        connections.append(newSocket)  // keep it: it has this delegate and the listener's run loop
    }

    func onSocket(_ sock: AsyncSocket, didConnectToHost host: String, port: UInt16) {
        startServerTLSFromDictionary(sock, chain: chain, key: key)
        sock.readData(withTimeout: -1, tag: 0)  // queued behind the handshake
    }

    func onSocket(_ sock: AsyncSocket, didRead data: Data, withTag tag: Int) {
        sock.write(data, withTimeout: -1, tag: 0)
        sock.readData(withTimeout: -1, tag: 0)
    }
}

final class SecureClient: AsyncSocketDelegate {
    let socket = AsyncSocket()
    let onSecure: @Sendable () -> Void

    init(onSecure: @escaping @Sendable () -> Void) {
        self.onSecure = onSecure
        socket.delegate = self
    }

    func start(port: UInt16) throws {
        try socket.connect(toHost: "127.0.0.1", onPort: port)
        startTLSWithAnyRoot(socket)
    }

    func onSocketDidSecure(_ sock: AsyncSocket) {
        onSecure()
    }
}

// MARK: - AsyncUdpSocket

final class UdpQuery: AsyncUdpSocketDelegate {
    let socket = AsyncUdpSocket()
    let onAnswer: @Sendable (String) -> Void

    init(onAnswer: @escaping @Sendable (String) -> Void) {
        self.onAnswer = onAnswer
        socket.delegate = self
    }

    func ask(_ question: String, port: UInt16) throws {
        try socket.bind(toAddress: "127.0.0.1", port: 0)
        guard socket.send(Data(question.utf8), toHost: "127.0.0.1", port: port, withTimeout: 5, tag: 1) else {
            return onAnswer("not sent")  // closed, or no destination: a Bool, as the original
        }
        socket.receive(withTimeout: 5, tag: 1)
    }

    func onUdpSocket(
        _ sock: AsyncUdpSocket,
        didReceive data: Data,
        withTag tag: Int,
        fromHost host: String,
        port: UInt16
    ) -> Bool {
        guard data.first != UInt8(ascii: "#") else { return false }  // not an answer: keep waiting
        onAnswer(String(decoding: data, as: UTF8.self))
        return true
    }

    func onUdpSocket(_ sock: AsyncUdpSocket, didNotReceiveDataWithTag tag: Int, dueToError error: (any Error)?) {
        onAnswer("no answer")  // AsyncUdpSocketErrorDomain 5 after the timeout; the socket stays open
    }
}

// MARK: - Tests

@Suite("The article \"From AsyncSocket (RunLoop)\": its after examples compile and run", .timeLimit(.minutes(2)))
struct PortingGuideRunLoopExamples {
    @Test("every after block of the article is code of the porting-guide test files, line for line")
    func articleSnippetsAreCompiledHere() throws {
        let article = "Sources/TetherSockets/TetherSockets.docc/PortingFromAsyncSocket.md"
        #expect(try ArticleSnippets.checkedBlocks(ofArticle: article).count >= 10)
        let missing = try ArticleSnippets.blocksMissing(
            fromArticle: article,
            inFiles: [
                "Tests/TetherSocketsTests/PortingGuideRunLoopExamples.swift",
                "Tests/TetherSocketsTests/PortingGuideExamples.swift",
            ]
        )
        #expect(missing.isEmpty, "not in the porting-guide examples:\n\(missing.joined(separator: "\n---\n"))")
    }

    @Test("the seed's echo client, on a thread that runs its run loop")
    func echoClient() async throws {
        let server = try EchoServer()
        defer { server.stop() }
        let port = server.port
        let replies = Handoff<String>()
        let thread = startSocketThread {
            let client = EchoClient(onReply: replies.put)
            do { try client.start(host: "127.0.0.1", port: port) } catch { replies.put("\(error)") }
            return [client]
        }
        defer { thread.cancel() }
        #expect(try await replies.next() == "test data\r\n")
    }

    @Test("header then body by tag: two STX frames, split across sends, with their CRCs checked")
    func frameClient() async throws {
        let listener = try RawListener()
        defer { listener.close() }
        let port = listener.port
        let messages = Handoff<STXMessage>()
        let thread = startSocketThread {
            let client = FrameClient(onMessage: messages.put)
            try? client.start(host: "127.0.0.1", port: port)
            return [client]
        }
        defer { thread.cancel() }
        let peer = try await onThread { listener.accept() }
        defer { peer.close() }
        let frame: [UInt8] = [0x02, 0x01, 0x00, 0x02, 0x00, 0x02, 0x00, 0x68, 0x69, 0xDA]
        peer.send(Array(frame[..<4]))
        peer.send(Array(frame[4...] + frame[..<8]))
        peer.send(Array(frame[8...]))
        let expected = STXMessage(destination: 1, source: 2, payload: Data("hi".utf8), checksumIsValid: true)
        #expect(try await messages.next() == expected)
        #expect(try await messages.next() == expected)
    }

    @Test("a refused connection reads as NSPOSIXErrorDomain ECONNREFUSED, then onSocketDidDisconnect")
    func refused() async throws {
        let bound = try BoundSocket(host: "127.0.0.1", port: 0)
        defer { bound.close() }
        let port = UInt16(try SocketAddress.localPort(of: bound.fd))
        let events = Handoff<LinkEvent>()
        let thread = startSocketThread {
            let monitor = LinkMonitor(onEvent: events.put)
            let socket = AsyncSocket(delegate: monitor)
            try? socket.connect(toHost: "127.0.0.1", onPort: port)
            return [monitor, socket]
        }
        defer { thread.cancel() }
        #expect(try await events.next() == .refused)
        #expect(try await events.next() == .closed)
    }

    @Test("a read timeout reads as AsyncSocketErrorDomain 4; a peer's close as nil with the unread bytes")
    func timeoutAndPeerClose() async throws {
        let listener = try RawListener()
        defer { listener.close() }
        let port = listener.port
        let events = Handoff<LinkEvent>()
        let thread = startSocketThread {
            let monitor = LinkMonitor(onEvent: events.put)
            let timingOut = AsyncSocket(delegate: monitor)
            try? timingOut.connect(toHost: "127.0.0.1", onPort: port)
            timingOut.readData(toLength: 4, withTimeout: 0.2, tag: 1)
            return [monitor, timingOut]
        }
        defer { thread.cancel() }
        let first = try await onThread { listener.accept() }
        defer { first.close() }
        #expect(try await events.next() == .timedOut)
        #expect(try await events.next() == .closed)

        let closing = startSocketThread {
            let monitor = LinkMonitor(onEvent: events.put)
            let socket = AsyncSocket(delegate: monitor)
            try? socket.connect(toHost: "127.0.0.1", onPort: port)
            socket.readData(toLength: 10, withTimeout: 5, tag: 1)
            return [monitor, socket]
        }
        defer { closing.cancel() }
        let second = try await onThread { listener.accept() }
        second.send("abc")
        second.close()
        #expect(try await events.next() == .peerClosed(leftover: Data("abc".utf8)))
        #expect(try await events.next() == .closed)
    }

    @Test("misuse throws AsyncSocketException with the original's reason; a veto throws canceledError")
    func misuseAndVeto() async throws {
        let answers = Handoff<String>()
        let handles = Handoff<Bool>()
        let thread = startSocketThread {
            answers.put(connectOrExplain(AsyncSocket(), port: 9))
            let vetoing = VetoingClient(allowsConnecting: false)
            let socket = AsyncSocket(delegate: vetoing)
            answers.put(connectOrExplain(socket, port: 9))
            handles.put(socket.getCFSocket() == nil && socket.getCFReadStream() == nil)
            return [vetoing, socket]
        }
        defer { thread.cancel() }
        #expect(try await answers.next() == "Attempting to connect without a delegate. Set a delegate first.")
        #expect(try await answers.next() == "vetoed by onSocketWillConnect")
        #expect(try await handles.next())
    }

    @Test("TLS from dictionaries on both ends: the server's key under kTetherStreamSSLPrivateKey, any root")
    func tlsDictionaries() async throws {
        let certificates = try await TLSTestCertificates.shared()
        let chain = [try certificates.certificate("server")]
        let key = try certificates.key("server")
        let ports = Handoff<UInt16>()
        let server = startSocketThread {
            let server = SecureEchoServer(chain: chain, key: key)
            ports.put((try? server.start()) ?? 0)
            return [server]
        }
        defer { server.cancel() }
        let port = try await ports.next()
        let secured = Handoff<Bool>()
        let client = startSocketThread {
            let client = SecureClient { secured.put(true) }
            try? client.start(port: port)
            return [client]
        }
        defer { client.cancel() }
        #expect(try await secured.next())
    }

    @Test("TLS failure reads as kCFStreamErrorDomainSSL: the default dictionary verifies the chain")
    func tlsFailureDomain() async throws {
        let certificates = try await TLSTestCertificates.shared()
        let chain = [try certificates.certificate("server")]
        let key = try certificates.key("server")
        let ports = Handoff<UInt16>()
        let server = startSocketThread {
            let server = SecureEchoServer(chain: chain, key: key)
            ports.put((try? server.start()) ?? 0)
            return [server]
        }
        defer { server.cancel() }
        let port = try await ports.next()
        let events = Handoff<LinkEvent>()
        let client = startSocketThread {
            let monitor = LinkMonitor(onEvent: events.put)
            let socket = AsyncSocket(delegate: monitor)
            try? socket.connect(toHost: "127.0.0.1", onPort: port)
            socket.startTLS(nil)  // the test CA is not in the system store
            return [monitor, socket]
        }
        defer { client.cancel() }
        let event = try await events.next()
        guard case .tlsFailed(let status) = event else {
            Issue.record("expected a TLS failure, got \(event)")
            return
        }
        #expect(status == -9812)  // errSSLUnknownRootCert
        #expect(try await events.next() == .closed)
    }

    @Test("UDP: a declined datagram leaves the request waiting; the next one answers it")
    func udpQuery() async throws {
        let peer = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let port = UInt16(peer.localPort)
        let answers = Handoff<String>()
        let thread = startSocketThread {
            let query = UdpQuery(onAnswer: answers.put)
            do { try query.ask("what time is it", port: port) } catch { answers.put("\(error)") }
            return [query]
        }
        defer { thread.cancel() }
        var datagrams = peer.datagrams.makeAsyncIterator()
        let question = try #require(try await datagrams.next())
        #expect(String(buffer: question.data) == "what time is it")
        try await peer.send(ByteBuffer(string: "#not an answer"), to: question.remoteAddress)
        try await peer.send(ByteBuffer(string: "noon"), to: question.remoteAddress)
        #expect(try await answers.next() == "noon")
        try await peer.close()
    }
}
