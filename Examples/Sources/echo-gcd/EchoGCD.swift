// echo-gcd: an echo server and client on the GCD-era face, `GCDAsyncSocket`, with callbacks on a delegate queue.
//
//   echo-gcd serve [--host 127.0.0.1] [--port 0]       prints "listening on HOST:PORT", then echoes every client
//   echo-gcd client [--host 127.0.0.1] --port N --message TEXT
//                                                       sends TEXT and a CRLF, prints the echoed line
//
// CocoaAsyncSocket's model: every call returns at once and queues a read or a write with a tag and a timeout; the
// delegate hears of each completed one, in order, on its queue. The server runs until interrupted under
// `dispatchMain()`; the client waits on a semaphore until its delegate saw the reply or the disconnection.
import ArgumentParser
import Dispatch
import Foundation
import TetherSockets

@main
struct EchoGCD: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "echo-gcd",
        abstract: "An echo server and client on GCDAsyncSocket.",
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
            try server.listener.accept(onInterface: host, port: port)
        } catch {
            printError("error: \(error.localizedDescription)")
            throw ExitCode.failure
        }
        printLine("listening on \(host):\(server.listener.localPort)")
        withExtendedLifetime(server) { dispatchMain() }  // the delegate is held weakly: keep it alive
    }
}

/// Accepts clients and echoes each one's bytes back, all on one serial delegate queue.
final class EchoServer: GCDAsyncSocketDelegate {
    let queue = DispatchQueue(label: "echo-gcd.server")
    let listener = GCDAsyncSocket()
    /// The connected clients, touched on `queue` only.
    private var clients: [ObjectIdentifier: GCDAsyncSocket] = [:]

    init() {
        listener.setDelegate(self, delegateQueue: queue)
    }

    func socket(_ sock: GCDAsyncSocket, didAcceptNewSocket newSocket: GCDAsyncSocket) {
        // The new socket has this delegate and queue; read whatever arrives (-1: no timeout).
        clients[ObjectIdentifier(newSocket)] = newSocket
        newSocket.readData(withTimeout: -1, tag: 0)
    }

    func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        sock.write(data, withTimeout: -1, tag: 0)
        sock.readData(withTimeout: -1, tag: 0)
    }

    func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {
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
        do {
            printLine(try EchoClient().send(message, host: host, port: port).get())
        } catch {
            printError("error: \(error.localizedDescription)")
            throw ExitCode.failure
        }
    }
}

/// Sends one line and waits for the line that comes back.
final class EchoClient: GCDAsyncSocketDelegate {
    static let writeTag = 1
    static let readTag = 2

    private let queue = DispatchQueue(label: "echo-gcd.client")
    private let socket = GCDAsyncSocket()
    private let done = DispatchSemaphore(value: 0)
    /// Set once, on `queue`, before `done` is signalled.
    private var outcome: Result<String, any Error>?

    func send(_ message: String, host: String, port: UInt16) -> Result<String, any Error> {
        socket.setDelegate(self, delegateQueue: queue)
        do {
            try socket.connect(toHost: host, onPort: port, withTimeout: 5)
        } catch {
            return .failure(error)
        }
        // Queued behind the connect: they run once it is up.
        socket.write(Data((message + "\r\n").utf8), withTimeout: 5, tag: Self.writeTag)
        socket.readData(to: GCDAsyncSocket.crlfData(), withTimeout: 5, tag: Self.readTag)
        done.wait()
        return outcome!
    }

    func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        outcome = .success(String(decoding: data.dropLast(2), as: UTF8.self))
        sock.disconnect()  // socketDidDisconnect(_:withError:) follows with nil
    }

    func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {
        // A timeout, a refusal or the server's close before the reply: a GCDAsyncSocketError.
        if outcome == nil {
            outcome = .failure(err ?? GCDAsyncSocketError(code: .closed, message: "closed before the reply"))
        }
        done.signal()
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
