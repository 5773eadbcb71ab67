import ArgumentParser
import Foundation
import NIOCore
import NIOPosix
import TetherSockets

/// `tether nc`: raw netcat over the async face.
struct NetcatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nc",
        abstract: "Send standard input to a TCP peer and print what it sends (netcat)."
    )

    @Flag(help: "Accept one client instead of connecting.")
    var listen = false

    @Argument(help: "The host to connect to (or listen on with --listen).")
    var host: String

    @Argument(help: "The port.")
    var port: Int

    @OptionGroup var common: CommonOptions

    func validate() throws {
        if !(0...65_535).contains(port) || (!listen && port == 0) {
            throw ValidationError("The port must be within 1...65535 (0 only with --listen).")
        }
    }

    func run() async throws {
        Terminal.exitOnSignals()
        let connection: TCPConnection
        do {
            if listen {
                let listener = try await TCPListener.bind(host: host, port: port)
                Terminal.error("listening on \(host):\(listener.localPort)")
                var iterator = listener.connections.makeAsyncIterator()
                guard let accepted = try await iterator.next() else { throw ExitCode.failure }
                try await listener.close()
                connection = accepted
            } else {
                connection = try await TCPConnection.connect(host: host, port: port)
            }
        } catch let error as AsyncSocketError {
            Terminal.error("error: \(error.message)")
            throw ExitCode.failure
        }
        // Standard input to the socket; its end half-closes. Not awaited: a read of stdin blocks its thread, and the
        // peer's close must end the command even while stdin stays open.
        let sender = Task {
            let input = FileHandle.standardInput
            while true {
                let chunk = try await Self.readChunk(input)
                if chunk.isEmpty { break }
                try await connection.write(ByteBuffer(bytes: chunk))
            }
            try await connection.halfClose()
        }
        // The socket to standard output; the peer's close ends the command.
        do {
            while let chunk = try await connection.readAvailable() {
                FileHandle.standardOutput.write(Data(chunk.readableBytesView))
            }
        } catch let error as AsyncSocketError {
            sender.cancel()
            Terminal.error("error: \(error.message)")
            throw ExitCode.failure
        }
        sender.cancel()
        try? await connection.close()
    }

    /// Reads stdin off the cooperative pool (a blocking read must not hold a Swift concurrency thread).
    private static func readChunk(_ handle: FileHandle) async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: handle.availableData)
            }
        }
    }
}
