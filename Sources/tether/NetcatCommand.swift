import ArgumentParser
import Foundation
import NIOCore
import NIOPosix
import TetherCore
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

    @Flag(help: "Use UDP: each standard-input line is one datagram.")
    var udp = false

    @Flag(help: "Print received bytes as a hex dump.")
    var hex = false

    @Option(help: "Seconds to wait for a TCP connection (and its TLS handshake) before giving up.")
    var connectTimeout: Double = 10

    @OptionGroup var framing: FrameOptions

    @OptionGroup var security: TLSOptions

    @OptionGroup var liveness: LivenessOptions
    @OptionGroup var proxying: ProxyOptions

    @OptionGroup var common: CommonOptions

    func validate() throws {
        if !(0...65_535).contains(port) || (!listen && port == 0) {
            throw ValidationError("The port must be within 1...65535 (0 only with --listen).")
        }
        if udp && framing.frame != nil { throw ValidationError("--frame does not go with --udp.") }
        if !(connectTimeout > 0 && connectTimeout <= 86_400) {
            throw ValidationError("--connect-timeout must be a number of seconds within (0, 86400].")
        }
        try security.check(server: listen, udp: udp)
        try liveness.check(udp: udp)
        try proxying.check(listen: listen, udp: udp)
    }

    func run() async throws {
        Terminal.exitOnSignals()
        if udp {
            try await runUDPNetcat(host: host, port: port, listen: listen)
            return
        }
        let connection: TCPConnection
        do {
            if listen {
                let listener = try await TCPListener.bind(host: host, port: port, tls: try security.serverSettings())
                Terminal.error("listening on \(host):\(listener.localPort)")
                var iterator = listener.connections.makeAsyncIterator()
                guard let accepted = try await iterator.next() else { throw ExitCode.failure }
                try await listener.close()
                connection = accepted
            } else {
                connection = try await TCPConnection.connect(
                    host: host,
                    port: port,
                    timeout: .milliseconds(Int64(connectTimeout * 1_000)),
                    tls: try security.clientSettings(),
                    proxy: try proxying.configuration(host: host, port: port, secure: security.tls)
                )
            }
            try await liveness.apply(to: connection)
        } catch let error as GCDAsyncSocketError {
            Terminal.error("error: \(error.message)")
            throw ExitCode.failure
        } catch let error as ProxyError {
            Terminal.error("error: \(error.message)")
            throw ExitCode.failure
        } catch let exit as ExitCode {
            throw exit
        } catch {
            Terminal.error("error: \(error)")
            throw ExitCode.failure
        }
        if framing.frame != nil {
            try await runFramed(connection)
            return
        }
        // Standard input to the socket; its end half-closes. Not awaited: a read of stdin blocks its thread, and the
        // peer's close must end the command even while stdin stays open.
        let hex = self.hex
        let sender = Task {
            while true {
                let chunk = await StandardInput.nextChunk()
                if chunk.isEmpty { break }
                try await connection.write(ByteBuffer(bytes: chunk))
            }
            try await connection.halfClose()
        }
        // The socket to standard output; the peer's close ends the command.
        do {
            while let chunk = try await connection.readAvailable() {
                if hex {
                    Terminal.line(chunk.hexDump(format: .detailed))
                } else {
                    Terminal.output(Data(chunk.readableBytesView))
                }
            }
        } catch let error as GCDAsyncSocketError {
            sender.cancel()
            Terminal.error("error: \(error.message)")
            throw ExitCode.failure
        }
        sender.cancel()
        try? await connection.close()
    }

    /// `--frame`: each standard-input line is one frame; each received frame is printed as one line.
    private func runFramed(_ connection: TCPConnection) async throws {
        let framing = self.framing
        let sender = Task {
            for try await line in Self.standardInputLines() {
                switch framing.frame {
                case .stx:
                    let frame = STXFrame(destination: framing.dest, source: framing.src, bytes: Array(line.utf8))
                    try await connection.write(frame, using: framing.stxCodec)
                case .length:
                    try await connection.write(ByteBuffer(string: line), using: framing.lengthCodec)
                case .line, nil:
                    try await connection.write(ByteBuffer(string: line), using: framing.lineCodec)
                }
            }
            try await connection.halfClose()
        }
        defer { sender.cancel() }
        do {
            switch framing.frame {
            case .stx:
                var frames = connection.frames(framing.stxCodec).makeAsyncIterator()
                while let frame = try await frames.next() { Terminal.line(frame.cliDescription) }
                if frames.codec.discardedByteCount > 0 {
                    Terminal.error("discarded \(frames.codec.discardedByteCount) bytes while resynchronising")
                }
            case .length:
                for try await frame in connection.frames(framing.lengthCodec) { Terminal.line(String(buffer: frame)) }
            case .line, nil:
                for try await frame in connection.frames(framing.lineCodec) { Terminal.line(String(buffer: frame)) }
            }
        } catch {
            Terminal.error("error: \(error)")
            throw ExitCode.failure
        }
        try? await connection.close()
    }

    /// Standard input's lines, read off the cooperative pool.
    private static func standardInputLines() -> AsyncThrowingStream<String, any Error> {
        AsyncThrowingStream { continuation in
            Thread.detachNewThread {
                while let line = readLine() { continuation.yield(line) }
                continuation.finish()
            }
        }
    }
}
