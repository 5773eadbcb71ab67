import Foundation
import NIOCore
import Testing
import TetherCore
import TetherSockets
import TetherTestSupport

// The snippets of the article "Getting started" (TetherSockets.docc/GettingStarted.md), line for line
// (`articleSnippetsAreCompiledHere` checks it). Each test shadows `print` to record what the snippet printed.

@Suite("The article \"Getting started\": its snippets compile and run", .timeLimit(.minutes(1)))
struct GettingStartedExamplesTests {
    @Test("every Swift block of the article is code of this file, line for line")
    func articleSnippetsAreCompiledHere() throws {
        let article = "Sources/TetherSockets/TetherSockets.docc/GettingStarted.md"
        #expect(try ArticleSnippets.checkedBlocks(ofArticle: article).count == 5)
        let missing = try ArticleSnippets.blocksMissing(
            fromArticle: article,
            inFiles: ["Tests/TetherSocketsTests/GettingStartedExamplesTests.swift"]
        )
        #expect(missing.isEmpty, "not in this file:\n\(missing.joined(separator: "\n---\n"))")
    }

    @Test("a server and a client: the line comes back, then frames go both ways")
    func serverClientAndFrames() async throws {
        var printed: [String] = []
        func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }

        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)  // 0: any free port
        let server = Task {
            for try await connection in listener.connections {
                Task {
                    while let chunk = try await connection.readAvailable() { try await connection.write(chunk) }
                    try await connection.close()
                }
            }
        }
        let connection = try await TCPConnection.connect(host: "127.0.0.1", port: listener.localPort)
        try await connection.write(ByteBuffer(string: "PING\r\n"))
        let line = try await connection.read(upTo: [0x0D, 0x0A], timeout: .seconds(5))  // "PING\r\n"
        #expect(String(buffer: line) == "PING\r\n")

        let codec = STXFrameCodec()
        try await connection.write(STXFrame(destination: 1, source: 2, bytes: Array("hi".utf8)), using: codec)
        for try await frame in connection.frames(codec) {  // an echo server sends it back
            print(frame.destination, frame.source, String(buffer: frame.payload))
            break
        }
        #expect(printed == ["1 2 hi"])

        try await connection.close()  // the bytes you wrote go out first
        server.cancel()
        try await listener.close()
    }

    @Test("datagrams: the receiver sees the bytes and the sender's address")
    func datagrams() async throws {
        var printed: [String] = []
        func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }

        let receiver = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let sender = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        try await sender.send(ByteBuffer(string: "hello"), toHost: "127.0.0.1", port: receiver.localPort)
        for try await datagram in receiver.datagrams {
            print(datagram.remoteAddress, String(buffer: datagram.data))
            break
        }
        #expect(printed.count == 1)
        #expect(printed.first?.hasSuffix("hello") == true)
        #expect(printed.first?.contains("\(sender.localPort)") == true)
        try await sender.close()
        try await receiver.close()
    }

    /// Compiled, not run: it would leave the machine.
    func tlsSnippetCompiles() async throws {
        let secure = try await TCPConnection.connect(host: "example.com", port: 443, tls: .client())
        try await secure.close()
    }
}
