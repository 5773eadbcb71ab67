import ArgumentParser
import NIOCore
import TetherCore
import TetherSockets

/// `stx-relay relay`: the async face. Each device connection is a task reading whole frames.
struct Relay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Route frames between devices, until interrupted.")

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free one.")
    var port = 0

    func run() async throws {
        let listener = try await TCPListener.bind(host: host, port: port)
        printLine("listening on \(host):\(listener.localPort)")
        let devices = DeviceTable()
        try await withThrowingDiscardingTaskGroup { group in
            for try await connection in listener.connections {
                group.addTask { await Self.serve(connection, devices: devices) }
            }
        }
    }

    /// Reads one device's frames until it leaves: registrations are answered, other frames forwarded.
    static func serve(_ connection: TCPConnection, devices: DeviceTable) async {
        do {
            // Whole frames: start byte, little-endian fields and CRC-8 checked; a bad frame throws.
            for try await frame in connection.frames(STXFrameCodec()) {
                if frame.destination == relayAddress {
                    await devices.register(frame.source, connection)
                    printLine("device \(frame.source) registered")
                    let answer = STXFrame(
                        destination: frame.source,
                        source: relayAddress,
                        payload: ByteBuffer(string: registeredPayload)
                    )
                    try await connection.write(answer, using: STXFrameCodec())
                } else {
                    await forward(frame, devices: devices)
                }
            }
        } catch {
            printError("device connection \(connection.remoteAddress): \(error)")
        }
        await devices.remove(connection)
        try? await connection.close()
    }

    /// Writes `frame` to the device registered under its destination, if there is one.
    static func forward(_ frame: STXFrame, devices: DeviceTable) async {
        guard let peer = await devices.connection(for: frame.destination) else {
            return printError("no device \(frame.destination): dropped a frame from \(frame.source)")
        }
        do {
            try await peer.write(frame, using: STXFrameCodec())
            printLine("relayed \(frame.payload.readableBytes) bytes from \(frame.source) to \(frame.destination)")
        } catch {
            // A device that went away costs its own frames only.
            printError("device \(frame.destination): \(error)")
        }
    }
}

/// The registered devices: id → connection.
actor DeviceTable {
    private var connections: [UInt16: TCPConnection] = [:]

    func register(_ id: UInt16, _ connection: TCPConnection) {
        connections[id] = connection
    }

    func connection(for id: UInt16) -> TCPConnection? {
        connections[id]
    }

    func remove(_ connection: TCPConnection) {
        connections = connections.filter { $0.value !== connection }
    }
}
