import Foundation
import NIOCore
import Testing
import TetherSockets
import TetherTestSupport

/// The `tether` executable, run as a user would (built by `swift build --build-tests` next to the test bundle).
struct TetherCommandTests {
    /// The `tether` executable; the test fails with how to build it when it is missing.
    static func tether() throws -> URL {
        try BuiltProduct.require("tether")
    }

    /// Starts `tether` with `arguments` and returns it with the first line it printed. Tests end it with `terminate()`
    /// and do not wait: its reaper thread collects it, and no thread of the cooperative pool blocks.
    static func startServer(_ arguments: [String]) async throws -> (ChildProcess, String) {
        let tether = try Self.tether()
        let process = ChildProcess()
        process.executableURL = tether
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let firstLine = try await onThread { () -> String in
            var line = Data()
            while !line.contains(0x0A) {
                let chunk = output.fileHandleForReading.nextChunk()
                if chunk.isEmpty { break }
                line.append(chunk)
            }
            return String(decoding: line, as: UTF8.self)
        }
        return (process, firstLine)
    }

    /// Serves one client of `listener`: reads until the client's end, answers "reply\n" and closes. The task's value
    /// is what the client sent ("no client" when none came).
    static func replyOnce(_ listener: TCPListener) -> Task<String, any Error> {
        Task {
            var iterator = listener.connections.makeAsyncIterator()
            guard let connection = try await iterator.next() else { return "no client" }
            var received = ByteBuffer()
            while var chunk = try await connection.readAvailable() { received.writeBuffer(&chunk) }
            try await connection.write(ByteBuffer(string: "reply\n"))
            try await connection.close()
            return String(buffer: received)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func serveEchoesAndPrintsItsPortFirst() async throws {
        let (process, firstLine) = try await Self.startServer(["serve", "--port", "0"])
        defer {
            process.terminate()
        }
        let prefix = "listening on 127.0.0.1:"
        #expect(firstLine.hasPrefix(prefix))
        let port = try #require(Int(firstLine.dropFirst(prefix.count).trimmingCharacters(in: .whitespacesAndNewlines)))
        let connection = try await TCPConnection.connect(host: "127.0.0.1", port: port)
        try await connection.write(ByteBuffer(string: "hello tether\n"))
        let echoed = try await connection.read(upTo: [0x0A], timeout: .seconds(5))
        #expect(String(buffer: echoed) == "hello tether\n")
        try await connection.close()
    }

    @Test(.timeLimit(.minutes(1)))
    func netcatSendsStandardInputAndPrintsTheReply() async throws {
        let tether = try Self.tether()
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let server = Self.replyOnce(listener)
        let process = ChildProcess()
        process.executableURL = tether
        process.arguments = ["nc", "127.0.0.1", String(listener.localPort)]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data("from stdin\n".utf8))
        try input.fileHandleForWriting.close()
        let printed = try await onThread { () -> Data in
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return data
        }
        #expect(try await server.value == "from stdin\n")
        #expect(String(decoding: printed, as: UTF8.self) == "reply\n")
        #expect(process.terminationStatus == 0)
        try await listener.close()
    }

    /// A standard input that cannot be read (here: open only for writing) is the end of the input, said once on
    /// standard error; the command goes on as after an end of input (half-close, the reply, exit 0), not a crash.
    @Test(.timeLimit(.minutes(1)), arguments: [false, true])
    func netcatTreatsAnUnreadableStandardInputAsItsEnd(udp: Bool) async throws {
        let tether = try Self.tether()
        let writeOnly = try #require(FileHandle(forWritingAtPath: "/dev/null"))
        defer { try? writeOnly.close() }
        let process = ChildProcess()
        process.executableURL = tether
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = writeOnly
        process.standardOutput = output
        process.standardError = errors
        if udp {
            // A UDP client with no input lingers for replies, then exits 0.
            let socket = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
            defer { Task { try? await socket.close() } }
            process.arguments = ["nc", "--udp", "127.0.0.1", String(socket.localPort)]
            try process.run()
        } else {
            let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
            let server = Self.replyOnce(listener)
            process.arguments = ["nc", "127.0.0.1", String(listener.localPort)]
            try process.run()
            #expect(try await server.value == "")
            try await listener.close()
        }
        let (printed, complaint) = try await onThread { () -> (Data, Data) in
            let printed = output.fileHandleForReading.readDataToEndOfFile()
            let complaint = errors.fileHandleForReading.readDataToEndOfFile()
            return (printed, complaint)
        }
        await process.exited()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
        #expect(String(decoding: printed, as: UTF8.self) == (udp ? "" : "reply\n"))
        #expect(String(decoding: complaint, as: UTF8.self).contains("cannot read standard input"))
    }

    /// Output to a pipe nobody reads (`tether serve | head -1` once `head` has gone) ends the command quietly, as
    /// SIGPIPE would: exit 141 (or the signal itself), not a crash in `FileHandle.write`.
    @Test(.timeLimit(.minutes(1)))
    func outputToAClosedPipeEndsTheCommandQuietly() async throws {
        let tether = try Self.tether()
        let output = Pipe()
        let errors = Pipe()
        // No reader at all: the first line the server prints meets a closed pipe.
        try output.fileHandleForReading.close()
        let process = ChildProcess()
        process.executableURL = tether
        process.arguments = ["serve", "--port", "0"]
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let complaint = try await onThread { errors.fileHandleForReading.readDataToEndOfFile() }
        await process.exited()
        let quiet =
            (process.terminationReason == .exit && process.terminationStatus == 141)
            || (process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGPIPE)
        #expect(quiet, "ended by \(process.terminationReason) \(process.terminationStatus)")
        #expect(complaint.isEmpty, "\(String(decoding: complaint, as: UTF8.self))")
    }

    @Test(.timeLimit(.minutes(1)))
    func badArgumentsExitWithTheUsageStatus() async throws {
        let tether = try Self.tether()
        let process = ChildProcess()
        process.executableURL = tether
        process.arguments = ["serve", "--port", "70000"]
        process.standardError = Pipe()
        try process.run()
        await process.exited()
        #expect(process.terminationStatus == 64)
    }

    @Test(.timeLimit(.minutes(1)))
    func framedNetcatAgainstAFramedServerPrintsEachFrame() async throws {
        let tether = try Self.tether()
        let (server, firstLine) = try await Self.startServer(["serve", "--frame", "stx"])
        defer {
            server.terminate()
        }
        let port = try #require(
            firstLine.split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        )
        let client = ChildProcess()
        client.executableURL = tether
        client.arguments = ["nc", "--frame", "stx", "--dest", "1", "--src", "2", "127.0.0.1", port]
        let input = Pipe()
        let output = Pipe()
        client.standardInput = input
        client.standardOutput = output
        try client.run()
        input.fileHandleForWriting.write(Data("hi\nhello\n".utf8))
        try input.fileHandleForWriting.close()
        let printed = try await onThread { () -> String in
            let data = output.fileHandleForReading.readDataToEndOfFile()
            client.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        #expect(printed == "dest=1 src=2 len=2 6869\ndest=1 src=2 len=5 68656c6c6f\n")
        #expect(client.terminationStatus == 0)
    }

    /// Runs `tether nc` with `arguments`, feeding `input`; returns what it printed and its exit status.
    static func netcat(_ arguments: [String], input text: String) async throws -> (String, Int32) {
        let tether = try Self.tether()
        let process = ChildProcess()
        process.executableURL = tether
        process.arguments = ["nc"] + arguments
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let printed = try await onThread { () -> Data in
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return data
        }
        return (String(decoding: printed, as: UTF8.self), process.terminationStatus)
    }

    @Test(.timeLimit(.minutes(1)))
    func tlsServeAndTLSNetcatTalkThroughTheTestCA() async throws {
        let certificates = try await TLSTestCertificates.shared()
        let (server, firstLine) = try await Self.startServer([
            "serve", "--tls", "--cert", certificates.certificatePath("server"), "--key", certificates.keyPath("server"),
        ])
        defer {
            server.terminate()
        }
        #expect(firstLine.hasSuffix("(TLS)\n"))
        let port = try #require(firstLine.split(separator: ":").last?.split(separator: " ").first.map(String.init))
        let (printed, status) = try await Self.netcat(
            ["--tls", "--ca", certificates.certificatePath("ca"), "localhost", port],
            input: "over tls\n"
        )
        #expect(printed == "over tls\n")
        #expect(status == 0)
        // Without the test CA the server is not trusted; --insecure skips verification.
        let (_, untrusted) = try await Self.netcat(["--tls", "localhost", port], input: "x\n")
        #expect(untrusted == 1)
        let (insecurePrinted, insecure) = try await Self.netcat(
            ["--tls", "--insecure", "127.0.0.1", port],
            input: "y\n"
        )
        #expect(insecurePrinted == "y\n" && insecure == 0)
    }

    @Test(
        .timeLimit(.minutes(1)),
        arguments: [["serve", "--tls"], ["serve", "--udp", "--tls"], ["nc", "--cert", "a.pem", "h", "1"]]
    )
    func badTLSArgumentsExitWithTheUsageStatus(arguments: [String]) async throws {
        let tether = try Self.tether()
        let process = ChildProcess()
        process.executableURL = tether
        process.arguments = arguments
        process.standardError = Pipe()
        try process.run()
        await process.exited()
        #expect(process.terminationStatus == 64)
    }
}
