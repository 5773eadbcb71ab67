// stx-relay: the seed's STX frames (`0x02 | dest | src | len | data | CRC`) between "devices" through a relay.
//
//   stx-relay relay [--host 127.0.0.1] [--port 0]
//       prints "listening on HOST:PORT", then routes each frame to the device registered under its destination
//   stx-relay device [--host 127.0.0.1] --port N --id ID [--to ID --message TEXT] [--count N]
//       registers as ID ("registered as ID"), sends TEXT to device --to, prints each frame it receives as
//       "frame src=1 dest=2: TEXT"; exits after --count frames (0: once its own frame is sent)
//
// Address 0 is the relay itself: a device registers by sending it a frame whose source is the device's id, and the
// relay answers with a frame from 0 whose payload is "registered".
//
// The two sides show two ways to read the same frames: the relay (Relay.swift) is written on the async face, where
// `connection.frames(STXFrameCodec())` yields whole frames with their CRC checked; the device (Device.swift) on the
// GCD-era face, reading as the seed did: the 7-byte header with one tag, then `len + 1` bytes (data and CRC) with
// another.
import ArgumentParser
import Foundation

@main
struct StxRelay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stx-relay",
        abstract: "STX frames between devices through a relay.",
        subcommands: [Relay.self, Device.self]
    )
}

/// The relay's own address: frames sent to it register their source.
let relayAddress: UInt16 = 0

/// The payload of the relay's answer to a registration.
let registeredPayload = "registered"

/// Writes a line to standard output at once (`print` keeps it in a buffer while stdout is a pipe).
func printLine(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

/// Writes a line to standard error.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
