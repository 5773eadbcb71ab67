import Testing

/// stx-relay: two devices exchange STX frames through the relay.
@Suite(.timeLimit(.minutes(1)))
struct StxRelayTests {
    /// Starts the relay and returns it with its port.
    static func startRelay() async throws -> (Example, Int) {
        let relay = try Example("stx-relay", ["relay", "--port", "0"])
        let port = try listeningPort(try await relay.line("the listening line") { _ in true })
        return (relay, port)
    }

    @Test func aFrameReachesTheDeviceItIsAddressedToWithItsSourceAndPayload() async throws {
        let (relay, port) = try await Self.startRelay()
        defer { relay.stop() }
        let receiver = try Example("stx-relay", ["device", "--port", "\(port)", "--id", "2", "--count", "1"])
        defer { receiver.stop() }
        try await receiver.line("device 2's registration") { $0 == "registered as 2" }

        let sender = try Example(
            "stx-relay",
            ["device", "--port", "\(port)", "--id", "513", "--to", "2", "--message", "hello, device 2", "--count", "0"]
        )
        let sent = try await sender.finish()
        #expect(sent.status == 0, "stderr: \(sent.stderr)")
        #expect(sent.stdout == ["registered as 513"])

        let received = try await receiver.finish()
        #expect(received.status == 0, "stderr: \(received.stderr)")
        #expect(received.stdout == ["registered as 2", "frame src=513 dest=2: hello, device 2"])
        try await relay.line("the relay's account") { $0 == "relayed 15 bytes from 513 to 2" }
    }

    @Test func aDeviceReceivesFramesFromSeveralDevicesInTheOrderTheyWereSent() async throws {
        let (relay, port) = try await Self.startRelay()
        defer { relay.stop() }
        let receiver = try Example("stx-relay", ["device", "--port", "\(port)", "--id", "7", "--count", "3"])
        defer { receiver.stop() }
        try await receiver.line("device 7's registration") { $0 == "registered as 7" }
        for source in [1, 2, 3] {
            let sender = try Example(
                "stx-relay",
                [
                    "device", "--port", "\(port)", "--id", "\(source)", "--to", "7", "--message", "#\(source)",
                    "--count", "0",
                ]
            )
            #expect(try await sender.exitStatus() == 0)
            // Written to device 7 before the relay says so: the next frame queues behind it.
            try await relay.line("frame #\(source) relayed") { $0 == "relayed 2 bytes from \(source) to 7" }
        }
        let received = try await receiver.finish()
        #expect(received.status == 0)
        #expect(
            received.stdout.dropFirst() == [
                "frame src=1 dest=7: #1", "frame src=2 dest=7: #2", "frame src=3 dest=7: #3",
            ]
        )
    }

    @Test func aFrameForAnUnknownDeviceIsDroppedAndTheRelaySaysSo() async throws {
        let (relay, port) = try await Self.startRelay()
        defer { relay.stop() }
        let sender = try Example(
            "stx-relay",
            ["device", "--port", "\(port)", "--id", "1", "--to", "99", "--message", "anyone?", "--count", "0"]
        )
        #expect(try await sender.exitStatus() == 0)
        let errors = relay.errors
        let line = try await offPool {
            try errors.next("the relay's complaint", timeout: 10) { $0.contains("no device 99") }
        }
        #expect(line == "no device 99: dropped a frame from 1")
    }
}
