// echo-runloop: an echo server and client on the RunLoop-era face, `AsyncSocket`, as the first seed wrote them.
//
//   echo-runloop serve [--host 127.0.0.1] [--port 0]       prints "listening on HOST:PORT", then echoes every client
//   echo-runloop client [--host 127.0.0.1] --port N --message TEXT
//                                                           sends TEXT and a CRLF, prints the echoed line
//
// A socket belongs to the run loop that is current when it connects or accepts, and its `onSocket…` callbacks run
// there only while that run loop runs. On iOS the main run loop always ran; a Linux program runs it itself: here
// the main thread, after `accept` or `connect`.
import ArgumentParser
import Foundation
import TetherSockets

@main
struct EchoRunLoop: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "echo-runloop",
        abstract: "An echo server and client on AsyncSocket and a run loop.",
        subcommands: [Serve.self, Client.self]
    )
}

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Echo what each client sends, until interrupted.")

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free one.")
    var port: UInt16 = 0

    func run() throws {
        let server = EchoServer()
        do {
            try server.listener.accept(onInterface: host, port: port)  // the main run loop is now the socket's
        } catch {
            printError("error: \(error.localizedDescription)")
            throw ExitCode.failure
        }
        printLine("listening on \(host):\(server.listener.localPort())")
        withExtendedLifetime(server) {  // the delegate is held weakly: keep it alive
            runRunLoop(until: { false })
        }
    }
}

/// Accepts clients on the listener's run loop and echoes each one's bytes back.
final class EchoServer: AsyncSocketDelegate {
    let listener = AsyncSocket()
    /// The connected clients: keep accepted sockets until they close (a released socket closes silently).
    private var clients: [ObjectIdentifier: AsyncSocket] = [:]

    init() {
        listener.delegate = self
    }

    func onSocket(_ sock: AsyncSocket, didAcceptNewSocket newSocket: AsyncSocket) {
        // The new socket has this delegate and the listener's run loop; read whatever arrives (-1: no timeout).
        clients[ObjectIdentifier(newSocket)] = newSocket
        newSocket.readData(withTimeout: -1, tag: 0)
    }

    func onSocket(_ sock: AsyncSocket, didRead data: Data, withTag tag: Int) {
        sock.write(data, withTimeout: -1, tag: 0)
        sock.readData(withTimeout: -1, tag: 0)
    }

    func onSocketDidDisconnect(_ sock: AsyncSocket) {
        clients[ObjectIdentifier(sock)] = nil
    }
}

struct Client: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Send one line and print the echoed line.")

    @Option(help: "The server's address.")
    var host = "127.0.0.1"

    @Option(help: "The server's port.")
    var port: UInt16

    @Option(help: "The text to send (one line).")
    var message: String

    func validate() throws {
        guard port != 0 else { throw ValidationError("--port must be within 1...65535.") }
        guard !message.contains(where: \.isNewline) else { throw ValidationError("--message must be one line.") }
    }

    func run() throws {
        let client = EchoClient()
        do {
            try client.start(message, host: host, port: port)
            runRunLoop(until: { client.outcome != nil })
            printLine(try client.outcome!.get())
        } catch {
            printError("error: \(error.localizedDescription)")
            throw ExitCode.failure
        }
    }
}

/// The seed's client: connect, write a line, read up to the CRLF, disconnect.
final class EchoClient: AsyncSocketDelegate {
    private let socket = AsyncSocket()
    /// Set by the callbacks, which run on this thread's run loop.
    private(set) var outcome: Result<String, any Error>?

    func start(_ message: String, host: String, port: UInt16) throws {
        socket.delegate = self
        try socket.connect(toHost: host, onPort: port, withTimeout: 5)
        // Queued behind the connect: they run once it is up.
        socket.write(Data((message + "\r\n").utf8), withTimeout: 5, tag: 1)
        socket.readData(to: AsyncSocket.crlfData(), withTimeout: 5, tag: 2)
    }

    func onSocket(_ sock: AsyncSocket, didRead data: Data, withTag tag: Int) {
        outcome = .success(String(decoding: data.dropLast(2), as: UTF8.self))
        sock.disconnect()  // on the run loop's thread: onSocketDidDisconnect runs before this returns
    }

    func onSocket(_ sock: AsyncSocket, willDisconnectWithError err: (any Error)?) {
        // A timeout or a refusal (an NSError in AsyncSocketErrorDomain or NSPOSIXErrorDomain); nil: the server closed.
        outcome = .failure(err ?? EchoFailure(errorDescription: "the server closed before replying"))
    }
}

struct EchoFailure: LocalizedError {
    var errorDescription: String?
}

/// Runs the current thread's run loop until `isDone` answers true, looking every 100 ms.
///
/// Foundation's `run(mode:before:)` returns at once when the run loop has no timer or source, so a timer keeps one
/// there. It does not return after the socket's callbacks (they come through a timer), hence the short slices.
func runRunLoop(until isDone: () -> Bool) {
    let keepAlive = Timer(timeInterval: 1e9, repeats: true) { _ in }
    RunLoop.current.add(keepAlive, forMode: .default)
    while !isDone() {
        _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.1))
    }
    keepAlive.invalidate()
}

/// Writes a line to standard output at once (`print` keeps it in a buffer while stdout is a pipe).
func printLine(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

/// Writes a line to standard error.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
