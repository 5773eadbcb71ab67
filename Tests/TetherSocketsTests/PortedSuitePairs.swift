import Foundation
import Testing
import TetherSockets

struct PortedPairFailure: Error, CustomStringConvertible {
    var description: String
}

/// The GCD era's listener, client and accepted socket, each on a delegate queue.
final class GCDPair: PortedSuiteTCPTests.Pair, @unchecked Sendable {
    // Sendable: the sockets are Sendable; `accepted` is read after the recorder saw it.
    let server = SocketRecorder(label: "ported-server")
    let clientRecorder = SocketRecorder(label: "ported-client")
    lazy var listener = GCDAsyncSocket(delegate: server, delegateQueue: server.queue)
    lazy var client = GCDAsyncSocket(delegate: clientRecorder, delegateQueue: clientRecorder.queue)

    var accepted: GCDAsyncSocket? { server.acceptedSockets.first }

    func listen(_ families: PortedSuiteTCPTests.Families) async throws -> UInt16 {
        switch families {
        case .both: break
        case .ipv4Only: listener.isIPv6Enabled = false
        case .ipv6Only: listener.isIPv4Enabled = false
        }
        try listener.accept(onInterface: "localhost", port: 0)
        return listener.localPort
    }

    func connect(host: String, port: UInt16, preferIPv4: Bool?) async throws {
        if let preferIPv4 {
            client.isIPv4PreferredOverIPv6 = preferIPv4
            // The other family only if the preferred one fails: a loaded machine must not let it win a race.
            client.alternateAddressDelay = 30
        }
        try client.connect(toHost: host, onPort: port, withTimeout: 10)
    }

    func established() async throws -> (isIPv4: Bool, isIPv6: Bool) {
        try await clientRecorder.wait { $0.contains { if case .connected = $0 { true } else { false } } }
        try await server.wait { $0.contains(.accepted) }
        let accepted = try #require(accepted)
        return (accepted.isIPv4, accepted.isIPv6)
    }

    func secure(_ certificates: TLSTestCertificates) async throws {
        let accepted = try #require(accepted)
        accepted.startTLS(try certificates.server())
        client.startTLS(try certificates.client(peerName: "localhost"))
        try await clientRecorder.wait { $0.contains(.secured) }
        try await server.wait { $0.contains(.secured) }
    }

    func serverWrite(_ count: Int) {
        accepted?.write(Data(repeating: 0x61, count: count), withTimeout: -1, tag: 0)
    }

    func clientRead(_ count: Int, timeout: TimeInterval) async throws -> Int {
        client.readData(toLength: UInt(count), withTimeout: timeout, tag: 77)
        let events = try await clientRecorder.wait {
            $0.contains { event in
                if case .read(_, 77) = event { return true }
                return event.isDisconnect
            }
        }
        for case .read(let data, 77) in events { return data.count }
        throw PortedPairFailure(description: "disconnected: \(events)")
    }

    func close() {
        client.disconnect()
        accepted?.disconnect()
        listener.disconnect()
    }
}

/// The RunLoop era's listener, client and accepted socket, all on one run-loop thread.
final class RunLoopPair: PortedSuiteTCPTests.Pair, @unchecked Sendable {
    // Sendable: the sockets are Sendable; the recorders lock their own state.
    let home = RunLoopThread(name: "ported-run-loop")
    let server = RunLoopSocketRecorder()
    let clientRecorder = RunLoopSocketRecorder()
    lazy var listener = AsyncSocket(delegate: server)
    lazy var client = AsyncSocket(delegate: clientRecorder)

    var accepted: AsyncSocket? { server.acceptedSockets.first }

    func listen(_ families: PortedSuiteTCPTests.Families) async throws -> UInt16 {
        let interface =
            switch families {
            case .both: "localhost"
            case .ipv4Only: "127.0.0.1"
            case .ipv6Only: "::1"
            }
        let listener = listener
        try await home.sync { try listener.accept(onInterface: interface, port: 0) }
        return listener.localPort()
    }

    func connect(host: String, port: UInt16, preferIPv4: Bool?) async throws {
        let client = client
        try await home.sync { try client.connect(toHost: host, onPort: port, withTimeout: 10) }
    }

    func established() async throws -> (isIPv4: Bool, isIPv6: Bool) {
        let isConnected: @Sendable ([RunLoopEvent]) -> Bool = {
            $0.contains { if case .connected = $0 { true } else { false } }
        }
        try await clientRecorder.wait(until: isConnected)
        try await server.wait(until: isConnected)
        let accepted = try #require(accepted)
        return (accepted.isIPv4(), accepted.isIPv6())
    }

    func secure(_ certificates: TLSTestCertificates) async throws {
        let accepted = try #require(accepted)
        accepted.startTLS([
            kCFStreamSSLIsServer: true,
            kCFStreamSSLCertificates: [try certificates.certificate("server")],
            kTetherStreamSSLPrivateKey: try certificates.key("server"),
        ])
        client.startTLS([kCFStreamSSLAllowsAnyRoot: true, kCFStreamSSLPeerName: "localhost"])
        try await clientRecorder.wait { $0.contains(.secured) }
        try await server.wait { $0.contains(.secured) }
    }

    func serverWrite(_ count: Int) {
        accepted?.write(Data(repeating: 0x61, count: count), withTimeout: -1, tag: 0)
    }

    func clientRead(_ count: Int, timeout: TimeInterval) async throws -> Int {
        client.readData(toLength: UInt(count), withTimeout: timeout, tag: 77)
        let events = try await clientRecorder.wait {
            $0.contains { event in
                if case .read(_, 77) = event { return true }
                return event == .disconnected
            }
        }
        for case .read(let data, 77) in events { return data.count }
        throw PortedPairFailure(description: "disconnected: \(events)")
    }

    func close() {
        client.disconnect()
        accepted?.disconnect()
        listener.disconnect()
        home.stop()
    }
}
