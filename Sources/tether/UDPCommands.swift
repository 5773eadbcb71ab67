import ArgumentParser
import Foundation
import NIOCore
import TetherConcurrency
import TetherSockets

/// `tether serve --udp`: echoes every datagram to its sender (or only counts it with `discard`), printing a line per
/// datagram on standard error.
func runUDPServe(host: String, port: Int, discard: Bool) async throws {
    Terminal.exitOnSignals()
    let socket: UDPSocket
    do {
        socket = try await UDPSocket.bind(host: host, port: port)
    } catch let error as GCDAsyncSocketError {
        Terminal.error("error: \(error.message)")
        throw ExitCode.failure
    }
    Terminal.error("serving UDP \(discard ? "discard" : "echo") on \(host):\(socket.localPort)")
    var count = 0
    for try await datagram in socket.datagrams {
        count += 1
        Terminal.error("#\(count) \(datagram.data.readableBytes) bytes from \(datagram.remoteAddress)")
        guard !discard else { continue }
        do {
            try await socket.send(datagram.data, to: datagram.remoteAddress)
        } catch let error as GCDAsyncSocketError {
            // One failed reply (the sender went away) does not stop the server.
            Terminal.error("reply to \(datagram.remoteAddress) failed: \(error.message)")
        }
    }
}

/// `tether nc --udp`: each chunk of standard input (a line when typed) becomes one datagram to `host:port`; every
/// datagram received is written to standard output. With `listen`, binds `host:port` and answers the last sender.
func runUDPNetcat(host: String, port: Int, listen: Bool) async throws {
    Terminal.exitOnSignals()
    let socket: UDPSocket
    let peer = LockedBox<SocketAddress?>(nil)
    do {
        if listen {
            socket = try await UDPSocket.bind(host: host, port: port)
            Terminal.error("listening on UDP \(host):\(socket.localPort)")
        } else {
            let target = try await resolveUDPTarget(host: host, port: port)
            let wildcard = target.protocol == .inet6 ? "::" : "0.0.0.0"
            socket = try await UDPSocket.bind(host: wildcard, port: 0)
            peer.withLock { $0 = target }
        }
    } catch let error as GCDAsyncSocketError {
        Terminal.error("error: \(error.message)")
        throw ExitCode.failure
    }
    // Standard input to the peer. UDP has no close to wait for: at the end of input a client lingers one second for
    // replies and exits; a listener keeps receiving until interrupted.
    let sender = Task {
        while true {
            let chunk = await StandardInput.nextChunk()
            if chunk.isEmpty { break }
            guard let target = peer.withLock({ $0 }) else {
                Terminal.error("no peer yet: nothing received, datagram not sent")
                continue
            }
            do {
                try await socket.send(ByteBuffer(bytes: chunk), to: target)
            } catch let error as GCDAsyncSocketError {
                Terminal.error("send failed: \(error.message)")
            }
        }
        guard !listen else { return }
        try await Task.sleep(for: .seconds(1))
        try await socket.close()
    }
    do {
        for try await datagram in socket.datagrams {
            if listen { peer.withLock { $0 = datagram.remoteAddress } }
            Terminal.output(Data(datagram.data.readableBytesView))
        }
    } catch let error as GCDAsyncSocketError {
        sender.cancel()
        Terminal.error("error: \(error.message)")
        throw ExitCode.failure
    }
    sender.cancel()
}

private func resolveUDPTarget(host: String, port: Int) async throws -> SocketAddress {
    if let literal = try? SocketAddress(ipAddress: host, port: port) { return literal }
    if host.lowercased() == "localhost" { return try SocketAddress(ipAddress: "127.0.0.1", port: port) }
    return try await Task.detached { try SocketAddress.makeAddressResolvingHost(host, port: port) }.value
}
