import NIOCore
import Testing

@testable import TetherSockets

/// The SOCKS5 machine as a table: what the client sends, and what each answer of the proxy leads to, with no I/O.
struct SOCKS5HandshakeTests {
    static let user = ProxyCredentials(username: "alice", password: "s3cret")

    func machine(
        host: String = "example.com",
        port: Int = 443,
        credentials: ProxyCredentials? = nil
    )
        -> SOCKS5Handshake
    {
        SOCKS5Handshake(
            target: ProxyTarget(host: host, port: port),
            credentials: credentials,
            proxyName: "127.0.0.1:1080"
        )
    }

    /// Feeds the proxy's bytes in `chunks` (one chunk per step) and returns every write and the last action.
    func run(
        _ machine: inout SOCKS5Handshake,
        proxySends script: [UInt8],
        chunkSize: Int,
        buffer: inout ByteBuffer
    ) -> (writes: [[UInt8]], last: ProxyHandshakeAction) {
        var writes: [[UInt8]] = []
        var last = machine.start()
        if case .write(let bytes) = last { writes.append(Array(bytes.readableBytesView)) }
        var offset = 0
        while offset < script.count {
            let end = min(offset + chunkSize, script.count)
            buffer.writeBytes(script[offset..<end])
            offset = end
            repeat {
                last = machine.received(&buffer)
                if case .write(let bytes) = last { writes.append(Array(bytes.readableBytesView)) }
            } while last != .waitForMoreBytes && buffer.readableBytes > 0 && !isFinal(last)
            if isFinal(last) { break }
        }
        return (writes, last)
    }

    func isFinal(_ action: ProxyHandshakeAction) -> Bool {
        switch action {
        case .tunnelEstablished, .fail: return true
        case .write, .waitForMoreBytes: return false
        }
    }

    static let successReply: [UInt8] = [0x05, 0x00, 0x00, 0x01, 10, 0, 0, 1, 0x04, 0x38]

    @Test(arguments: [1, 2, 3, 100])
    func aTunnelWithoutAuthenticationSendsTheNameAndKeepsTheBytesAfterTheReply(chunkSize: Int) {
        var socks = machine()
        var buffer = ByteBuffer()
        let tunnelBytes: [UInt8] = Array("hello".utf8)
        let (writes, last) = run(
            &socks,
            proxySends: [0x05, 0x00] + Self.successReply + tunnelBytes,
            chunkSize: chunkSize,
            buffer: &buffer
        )
        #expect(last == .tunnelEstablished)
        let name = Array("example.com".utf8)
        #expect(writes == [[0x05, 0x01, 0x00], [0x05, 0x01, 0x00, 0x03, UInt8(name.count)] + name + [0x01, 0xBB]])
        // What came after the reply in the same chunk stays in the buffer: it belongs to the tunnel.
        let rest = Array(buffer.readableBytesView)
        #expect(tunnelBytes.starts(with: rest))
        if chunkSize == 100 { #expect(rest == tunnelBytes) }
    }

    @Test(arguments: [1, 64])
    func usernameAndPasswordAreOfferedAndSentWhenTheProxyChoosesThem(chunkSize: Int) {
        var socks = machine(credentials: Self.user)
        var buffer = ByteBuffer()
        let (writes, last) = run(
            &socks,
            proxySends: [0x05, 0x02, 0x01, 0x00] + Self.successReply,
            chunkSize: chunkSize,
            buffer: &buffer
        )
        #expect(last == .tunnelEstablished)
        #expect(writes.count == 3)
        #expect(writes.first == [0x05, 0x02, 0x00, 0x02])
        #expect(writes.dropFirst().first == [0x01, 5] + Array("alice".utf8) + [6] + Array("s3cret".utf8))
        #expect(writes.last?.prefix(4) == [0x05, 0x01, 0x00, 0x03])
    }

    @Test func aProxyThatNeedsNoLoginGoesStraightToTheRequestWithCredentialsSet() {
        var socks = machine(credentials: Self.user)
        var buffer = ByteBuffer()
        let (writes, last) = run(&socks, proxySends: [0x05, 0x00] + Self.successReply, chunkSize: 64, buffer: &buffer)
        #expect(last == .tunnelEstablished)
        #expect(writes.count == 2)
    }

    static let literals: [(String, [UInt8])] = [
        ("192.0.2.7", [0x01, 192, 0, 2, 7]),
        ("::1", [0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
        ("2001:db8::2", [0x04, 0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]),
    ]

    @Test(arguments: literals)
    func addressLiteralsUseTheirAddressType(host: String, encoded: [UInt8]) {
        var socks = machine(host: host, port: 7)
        var buffer = ByteBuffer()
        let (writes, _) = run(&socks, proxySends: [0x05, 0x00], chunkSize: 64, buffer: &buffer)
        #expect(writes.last == [0x05, 0x01, 0x00] + encoded + [0x00, 0x07])
    }

    @Test(arguments: [
        (UInt8(0x01), ProxyError.Code.generalFailure),
        (0x02, .connectionNotAllowed),
        (0x03, .networkUnreachable),
        (0x04, .hostUnreachable),
        (0x05, .connectionRefused),
        (0x06, .ttlExpired),
        (0x07, .commandNotSupported),
        (0x08, .addressTypeNotSupported),
        (0x09, .unassignedReply),
        (0xFF, .unassignedReply),
    ])
    func everyReplyCodeFailsWithItsOwnCode(reply: UInt8, code: ProxyError.Code) throws {
        var socks = machine()
        var buffer = ByteBuffer()
        let (_, last) = run(&socks, proxySends: [0x05, 0x00, 0x05, reply], chunkSize: 64, buffer: &buffer)
        guard case .fail(let error) = last else {
            Issue.record("expected a failure, got \(last)")
            return
        }
        #expect(error.code == code)
        #expect(error.replyCode == Int(reply))
        #expect(error.message.contains("example.com:443"))
        #expect(socks.state == .failed)
    }

    @Test func aRefusedLoginFailsAsAuthenticationFailedWithoutShowingThePassword() {
        var socks = machine(credentials: Self.user)
        var buffer = ByteBuffer()
        let (_, last) = run(&socks, proxySends: [0x05, 0x02, 0x01, 0x01], chunkSize: 64, buffer: &buffer)
        guard case .fail(let error) = last else {
            Issue.record("expected a failure, got \(last)")
            return
        }
        #expect(error.code == .authenticationFailed)
        #expect(error.replyCode == 1)
        #expect(error.message.contains("alice"))
        #expect(!error.message.contains("s3cret"))
    }

    @Test(arguments: [false, true])
    func noAcceptableMethodFailsAsAuthenticationRequired(withCredentials: Bool) {
        var socks = machine(credentials: withCredentials ? Self.user : nil)
        var buffer = ByteBuffer()
        let (_, last) = run(&socks, proxySends: [0x05, 0xFF], chunkSize: 64, buffer: &buffer)
        guard case .fail(let error) = last else {
            Issue.record("expected a failure, got \(last)")
            return
        }
        #expect(error.code == .authenticationRequired)
        #expect(error.replyCode == 0xFF)
    }

    @Test(arguments: [
        [0x04, 0x00] as [UInt8],  // not SOCKS5
        [0x05, 0x02],  // username/password chosen, never offered
        [0x05, 0x00, 0x04, 0x00],  // reply of the wrong version
        [0x05, 0x00, 0x05, 0x00, 0x00, 0x07, 0x00],  // unknown address type in the reply
    ])
    func answersThatBreakTheProtocolFailAsProtocolViolation(script: [UInt8]) {
        var socks = machine()
        var buffer = ByteBuffer()
        let (_, last) = run(&socks, proxySends: script, chunkSize: 64, buffer: &buffer)
        guard case .fail(let error) = last else {
            Issue.record("expected a failure, got \(last)")
            return
        }
        #expect(error.code == .protocolViolation)
    }

    @Test func aReplyWithADomainNameIsReadToItsEnd() {
        var socks = machine()
        var buffer = ByteBuffer()
        let reply: [UInt8] = [0x05, 0x00, 0x00, 0x03, 3] + Array("abc".utf8) + [0x00, 0x50]
        let (_, last) = run(&socks, proxySends: [0x05, 0x00] + reply + [0xAA], chunkSize: 1, buffer: &buffer)
        #expect(last == .tunnelEstablished)
        #expect(Array(buffer.readableBytesView) == [])
        var whole = ByteBuffer(bytes: reply + [0xAA])
        var again = machine()
        _ = again.start()
        var choice = ByteBuffer(bytes: [0x05, 0x00])
        _ = again.received(&choice)
        #expect(again.received(&whole) == .tunnelEstablished)
        #expect(Array(whole.readableBytesView) == [0xAA])
    }

    @Test(arguments: [
        ProxyCredentials(username: "", password: "x"),
        ProxyCredentials(username: "x", password: String(repeating: "p", count: 256)),
    ])
    func credentialsSOCKS5CannotCarryFailBeforeAnythingIsSent(credentials: ProxyCredentials) {
        var socks = machine(credentials: credentials)
        guard case .fail(let error) = socks.start() else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .badConfiguration)
        #expect(!error.message.contains("ppp"))
    }

    @Test func aHostNameLongerThan255BytesFailsBeforeAnythingIsSent() {
        var socks = machine(host: String(repeating: "a", count: 256))
        guard case .fail(let error) = socks.start() else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .badConfiguration)
    }

    @Test func theProxyClosingBeforeTheReplyFailsAsClosedDuringHandshake() {
        var socks = machine()
        _ = socks.start()
        guard case .fail(let error) = socks.endOfInput() else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .closedDuringHandshake)
    }
}
