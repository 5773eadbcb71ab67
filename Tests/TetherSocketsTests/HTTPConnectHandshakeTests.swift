import NIOCore
import Testing

@testable import TetherSockets

/// The HTTP CONNECT machine as a table: the request, and what each response leads to, with no I/O.
struct HTTPConnectHandshakeTests {
    func machine(
        host: String = "example.com",
        port: Int = 443,
        credentials: ProxyCredentials? = nil,
        limit: Int = HTTPConnectHandshake.maximumHeaderLength
    ) -> HTTPConnectHandshake {
        HTTPConnectHandshake(
            target: ProxyTarget(host: host, port: port),
            credentials: credentials,
            proxyName: "127.0.0.1:3128",
            maximumHeaderLength: limit
        )
    }

    func request(_ machine: inout HTTPConnectHandshake) -> String {
        guard case .write(let bytes) = machine.start() else { return "" }
        return String(buffer: bytes)
    }

    /// Feeds `response` in chunks of `chunkSize` until the machine decides; returns its decision and the buffer.
    func feed(
        _ machine: inout HTTPConnectHandshake,
        _ response: String,
        chunkSize: Int
    ) -> (
        ProxyHandshakeAction, ByteBuffer
    ) {
        let bytes = Array(response.utf8)
        var buffer = ByteBuffer()
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + chunkSize, bytes.count)
            buffer.writeBytes(bytes[offset..<end])
            offset = end
            let action = machine.received(&buffer)
            if action != .waitForMoreBytes { return (action, buffer) }
        }
        return (.waitForMoreBytes, buffer)
    }

    @Test func theRequestNamesTheTargetTwice() {
        var http = machine()
        #expect(request(&http) == "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
    }

    @Test func credentialsAreSentAsBasicAuthorization() {
        var http = machine(credentials: ProxyCredentials(username: "user", password: "pass"))
        #expect(request(&http).contains("\r\nProxy-Authorization: Basic dXNlcjpwYXNz\r\n"))
    }

    @Test func anIPv6TargetIsWrittenInBrackets() {
        var http = machine(host: "::1", port: 7)
        #expect(request(&http).hasPrefix("CONNECT [::1]:7 HTTP/1.1\r\nHost: [::1]:7\r\n"))
    }

    @Test(arguments: [1, 2, 7, 1000])
    func a2xxOpensTheTunnelAndTheBytesAfterTheHeaderStay(chunkSize: Int) {
        var http = machine()
        _ = request(&http)
        let response = "HTTP/1.1 200 Connection established\r\nProxy-Agent: test\r\n\r\n"
        let (action, buffer) = feed(&http, response + "SSH-2.0-hello", chunkSize: chunkSize)
        #expect(action == .tunnelEstablished)
        #expect("SSH-2.0-hello".hasPrefix(String(buffer: buffer)))
        if chunkSize == 1000 { #expect(String(buffer: buffer) == "SSH-2.0-hello") }
    }

    @Test func bareLineFeedsEndTheHeaderToo() {
        var http = machine()
        _ = request(&http)
        let (action, buffer) = feed(&http, "HTTP/1.0 200 OK\n\nX", chunkSize: 100)
        #expect(action == .tunnelEstablished)
        #expect(String(buffer: buffer) == "X")
    }

    @Test func interimResponsesAreSkipped() {
        var http = machine()
        _ = request(&http)
        let (action, buffer) = feed(&http, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n", chunkSize: 100)
        #expect(action == .tunnelEstablished)
        #expect(buffer.readableBytes == 0)
    }

    @Test(arguments: [false, true])
    func a407FailsWithTheStatusLineAndReason(withCredentials: Bool) {
        var http = machine(credentials: withCredentials ? ProxyCredentials(username: "bob", password: "pw!") : nil)
        _ = request(&http)
        let response = "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n\r\n<html>"
        let (action, _) = feed(&http, response, chunkSize: 5)
        guard case .fail(let error) = action else {
            Issue.record("expected a failure, got \(action)")
            return
        }
        #expect(error.code == (withCredentials ? .authenticationFailed : .authenticationRequired))
        #expect(error.replyCode == 407)
        #expect(error.statusLine == "HTTP/1.1 407 Proxy Authentication Required")
        #expect(error.reason == "Proxy Authentication Required")
        #expect(error.message.contains("Proxy Authentication Required"))
        #expect(!error.message.contains("pw!"))
    }

    @Test(arguments: [
        ("HTTP/1.1 403 Filtered", 403),
        ("HTTP/1.1 502 Bad Gateway", 502),
        ("HTTP/1.0 301 Moved", 301),
    ])
    func otherStatusesFailAsHTTPStatusWithTheProxysWords(statusLine: String, status: Int) {
        var http = machine()
        _ = request(&http)
        let (action, _) = feed(&http, statusLine + "\r\nContent-Length: 0\r\n\r\n", chunkSize: 100)
        guard case .fail(let error) = action else {
            Issue.record("expected a failure, got \(action)")
            return
        }
        #expect(error.code == .httpStatus)
        #expect(error.replyCode == status)
        #expect(error.statusLine == statusLine)
        #expect(error.message.contains(statusLine))
    }

    @Test(arguments: ["SSH-2.0-OpenSSH\r\n\r\n", "HTTP/1.1 2000 Huh\r\n\r\n", "HTTP/2 200\r\n\r\n"])
    func aResponseThatIsNotHTTPFailsAsProtocolViolation(response: String) {
        var http = machine()
        _ = request(&http)
        let (action, _) = feed(&http, response, chunkSize: 100)
        guard case .fail(let error) = action else {
            Issue.record("expected a failure, got \(action)")
            return
        }
        #expect(error.code == .protocolViolation)
    }

    @Test(arguments: [1, 50])
    func aHeaderPastTheLimitFailsAsResponseTooLarge(chunkSize: Int) {
        var http = machine(limit: 64)
        _ = request(&http)
        let endless = "HTTP/1.1 200 OK\r\nX-Padding: " + String(repeating: "a", count: 200)
        let (action, _) = feed(&http, endless, chunkSize: chunkSize)
        guard case .fail(let error) = action else {
            Issue.record("expected a failure, got \(action)")
            return
        }
        #expect(error.code == .responseTooLarge)
    }

    @Test func aHeaderEndingJustPastTheLimitFailsAndOneWithinItSucceeds() {
        let header = "HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: 30) + "\r\n\r\n"
        var over = machine(limit: header.utf8.count - 1)
        _ = request(&over)
        guard case .fail(let error) = feed(&over, header, chunkSize: 1000).0 else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .responseTooLarge)
        var within = machine(limit: header.utf8.count)
        _ = request(&within)
        #expect(feed(&within, header, chunkSize: 1000).0 == .tunnelEstablished)
    }

    @Test func theProxyClosingBeforeAnsweringFailsAsClosedDuringHandshake() {
        var http = machine()
        _ = request(&http)
        guard case .fail(let error) = http.endOfInput() else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .closedDuringHandshake)
    }

    @Test func aTargetWithANewlineIsRefusedBeforeAnythingIsSent() {
        var http = machine(host: "example.com\r\nX-Injected: 1")
        guard case .fail(let error) = http.start() else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .badConfiguration)
    }
}
