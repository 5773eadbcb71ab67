import ArgumentParser
import NIOCore
import TetherCore
import TetherSockets

/// `tether serve`: an echo or discard server on the async face.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run an echo (default), discard or notes server until SIGINT/SIGTERM."
    )

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free one.")
    var port = 0

    @Flag(help: "Echo what each client sends (the default).")
    var echo = false

    @Flag(help: "Read and drop what each client sends.")
    var discard = false

    @Flag(help: "Serve UDP: echo each datagram to its sender.")
    var udp = false

    @Flag(help: "Serve the notes service (STX frames; see the TetherNotes docs) to the users of `tether notes user`.")
    var notes = false

    @Option(help: "With --notes --anonymous: the store, plist, archive or sqlite (accounts are always SQLite).")
    var store: NotesCommand.StoreOption = .sqlite

    @Option(help: "With --notes: the folder of the store (default: the tether app's Documents folder).")
    var dir: String?

    @Option(
        help: ArgumentHelp(
            "With --notes: keep the notes in PostgreSQL instead (postgres://USER[:PASSWORD]@HOST[:PORT]/DB).",
            discussion: "Every server on the same database pushes every change to its watchers.",
            valueName: "url"
        )
    )
    var postgres: String?

    @Flag(
        help: ArgumentHelp(
            "With --notes: serve without accounts (anyone who reaches the port); loopback only.",
            discussion: "Without it, every connection logs in as a user of `tether notes user add`."
        )
    )
    var anonymous = false

    @Flag(
        name: .customLong("insecure-no-tls"),
        help: ArgumentHelp(
            "With --notes: allow listening off loopback without --tls.",
            discussion: "Passwords, tokens and notes then travel in the clear."
        )
    )
    var insecureNoTLS = false

    @OptionGroup var framing: FrameOptions

    @OptionGroup var security: TLSOptions

    @OptionGroup var common: CommonOptions

    func validate() throws {
        if echo && discard { throw ValidationError("--echo and --discard exclude each other.") }
        if !(0...65_535).contains(port) { throw ValidationError("--port must be within 0...65535.") }
        if udp && framing.frame != nil { throw ValidationError("--frame does not go with --udp.") }
        if notes && (udp || echo || discard || framing.frame != nil) {
            throw ValidationError("--notes does not go with --udp, --echo, --discard or --frame.")
        }
        if postgres != nil && !notes { throw ValidationError("--postgres goes with --notes.") }
        if postgres != nil && dir != nil { throw ValidationError("--postgres and --dir exclude each other.") }
        if (anonymous || insecureNoTLS) && !notes {
            throw ValidationError("--anonymous and --insecure-no-tls go with --notes.")
        }
        try security.check(server: true, udp: udp)
    }

    func run() async throws {
        Terminal.exitOnSignals()
        if udp {
            try await runUDPServe(host: host, port: port, discard: discard)
            return
        }
        if notes {
            try await ServeNotes(
                host: host,
                port: port,
                store: store,
                dir: dir,
                postgres: postgres,
                anonymous: anonymous,
                insecureNoTLS: insecureNoTLS
            ).run(tls: try security.serverSettings())
            return
        }
        let listener: TCPListener
        do {
            listener = try await TCPListener.bind(host: host, port: port, tls: try security.serverSettings())
        } catch {
            Terminal.error("error: \(error)")
            throw ExitCode.failure
        }
        Terminal.line("listening on \(host):\(listener.localPort)\(security.tls ? " (TLS)" : "")")
        let discard = self.discard
        let framing = self.framing
        try await Self.serveEach(of: listener) { connection in
            do {
                switch framing.frame {
                case nil:
                    while let chunk = try await connection.readAvailable() {
                        if !discard { try await connection.write(chunk) }
                    }
                case .stx:
                    try await Self.echoFrames(connection, codec: framing.stxCodec, discard: discard)
                case .length:
                    try await Self.echoFrames(connection, codec: framing.lengthCodec, discard: discard)
                case .line:
                    try await Self.echoFrames(connection, codec: framing.lineCodec, discard: discard)
                }
            } catch {
                // One client's failure never stops the server.
                Terminal.error("client: \(error)")
            }
            try? await connection.close()
        }
    }

    /// Runs `serve` for each accepted connection, concurrently, until the listener ends: in a discarding task group
    /// where the OS has one (Linux; macOS 14, iOS 17), so that finished clients leave nothing behind; on older Apple
    /// systems, in a task per client.
    private static func serveEach(
        of listener: TCPListener,
        _ serve: @escaping @Sendable (TCPConnection) async -> Void
    ) async throws {
        if #available(macOS 14, iOS 17, tvOS 17, *) {
            try await withThrowingDiscardingTaskGroup { group in
                for try await connection in listener.connections {
                    group.addTask { await serve(connection) }
                }
            }
        } else {
            // A plain task group keeps every finished child until it is awaited: a task per client instead.
            for try await connection in listener.connections {
                Task { await serve(connection) }
            }
        }
    }

    /// Decodes frames with `codec` and writes each back re-encoded (unless discarding).
    private static func echoFrames<Codec: FrameCodec>(
        _ connection: TCPConnection,
        codec: Codec,
        discard: Bool
    )
        async throws
    {
        for try await frame in connection.frames(codec) where !discard {
            try await connection.write(frame, using: codec)
        }
    }
}
