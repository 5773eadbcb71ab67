// echo-async: an echo server and client on Tether's async face, `TCPListener` and `TCPConnection`.
//
//   echo-async serve [--host 127.0.0.1] [--port 0]       prints "listening on HOST:PORT", then echoes every client
//   echo-async client [--host 127.0.0.1] --port N --message TEXT
//                                                         sends TEXT and a CRLF, prints the echoed line
//
// No delegate, no queue, no run loop: each client is a task of a task group that reads what is available and
// writes it back; the client writes a line and reads up to the CRLF with a timeout.
import ArgumentParser
import Foundation
import NIOCore
import TetherSockets

@main
struct EchoAsync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "echo-async",
        abstract: "An echo server and client on TCPListener and TCPConnection.",
        subcommands: [Serve.self, Client.self]
    )
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Echo what each client sends, until interrupted.")

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free one.")
    var port = 0

    func run() async throws {
        let listener = try await TCPListener.bind(host: host, port: port)
        printLine("listening on \(host):\(listener.localPort)")
        try await withThrowingDiscardingTaskGroup { group in
            for try await connection in listener.connections {
                group.addTask {
                    do {
                        // nil: the client closed its side.
                        while let chunk = try await connection.readAvailable() {
                            try await connection.write(chunk)
                        }
                    } catch {
                        // One client's failure never stops the server.
                        printError("client \(connection.remoteAddress): \(error)")
                    }
                    try? await connection.close()
                }
            }
        }
    }
}

struct Client: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Send one line and print the echoed line.")

    @Option(help: "The server's address.")
    var host = "127.0.0.1"

    @Option(help: "The server's port.")
    var port: Int

    @Option(help: "The text to send (one line).")
    var message: String

    func validate() throws {
        guard (1...65_535).contains(port) else { throw ValidationError("--port must be within 1...65535.") }
        guard !message.contains(where: \.isNewline) else { throw ValidationError("--message must be one line.") }
    }

    func run() async throws {
        do {
            let connection = try await TCPConnection.connect(host: host, port: port, timeout: .seconds(5))
            try await connection.write(ByteBuffer(string: message + "\r\n"))
            // The bytes up to and including the CRLF; a timeout throws and consumes nothing.
            let reply = try await connection.read(upTo: [0x0D, 0x0A], timeout: .seconds(5))
            try await connection.close()
            printLine(String(decoding: reply.readableBytesView.dropLast(2), as: UTF8.self))  // without the CRLF
        } catch {
            printError("error: \(error.localizedDescription)")
            throw ExitCode.failure
        }
    }
}

/// Writes a line to standard output at once (`print` keeps it in a buffer while stdout is a pipe).
func printLine(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

/// Writes a line to standard error.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
