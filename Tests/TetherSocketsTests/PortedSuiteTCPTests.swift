import Foundation
import Testing
import TetherSockets

/// CocoaAsyncSocket's own TCP tests (`Tests/Shared/SwiftTests.swift`, `GCDAsyncSocketConnectionTests.m`,
/// `GCDAsyncSocketReadTests.swift`), ported: each behaviour runs against both eras' classes. Where an era has no
/// such knob (the RunLoop era has no family switches or preference), the nearest call of that era does the same.
@Suite("CocoaAsyncSocket's suite, ported: TCP on both eras", .timeLimit(.minutes(3)))
struct PortedSuiteTCPTests {
    enum Era: String, CaseIterable, Sendable {
        case gcd, runLoop
    }

    /// Which families a listener uses.
    enum Families {
        case both, ipv4Only, ipv6Only
    }

    /// A listener, a client and the accepted socket of one era.
    protocol Pair: AnyObject {
        /// Listens on a free port; returns it.
        func listen(_ families: Families) async throws -> UInt16
        /// Connects the client; `preferIPv4` nil: the era's default.
        func connect(host: String, port: UInt16, preferIPv4: Bool?) async throws
        /// Waits until the client reports its connection and the listener its accepted socket; returns whether
        /// the accepted socket is IPv4 and IPv6.
        func established() async throws -> (isIPv4: Bool, isIPv6: Bool)
        /// Secures both ends (server and client, any root, the name "localhost").
        func secure(_ certificates: TLSTestCertificates) async throws
        /// The accepted side writes `count` bytes.
        func serverWrite(_ count: Int)
        /// The client reads exactly `count` bytes; fails on a disconnect or a timeout of `timeout` seconds.
        func clientRead(_ count: Int, timeout: TimeInterval) async throws -> Int
        func close()
    }

    static func pair(_ era: Era) -> any Pair {
        switch era {
        case .gcd: GCDPair()
        case .runLoop: RunLoopPair()
        }
    }

    @Test("full connection: accept, then connect to 127.0.0.1", arguments: Era.allCases)
    func fullConnection(era: Era) async throws {
        let pair = Self.pair(era)
        defer { pair.close() }
        let port = try await pair.listen(.both)
        try await pair.connect(host: "127.0.0.1", port: port, preferIPv4: nil)
        let accepted = try await pair.established()
        #expect(accepted.isIPv4)
    }

    @Test("an IPv4-only server accepts an IPv4 client", arguments: Era.allCases)
    func ipv4OnlyServer(era: Era) async throws {
        let pair = Self.pair(era)
        defer { pair.close() }
        let port = try await pair.listen(.ipv4Only)
        try await pair.connect(host: "127.0.0.1", port: port, preferIPv4: nil)
        #expect(try await pair.established().isIPv4)
    }

    @Test("an IPv6-only server accepts a client of ::1", arguments: Era.allCases)
    func ipv6OnlyServer(era: Era) async throws {
        let pair = Self.pair(era)
        defer { pair.close() }
        let port = try await pair.listen(.ipv6Only)
        try await pair.connect(host: "::1", port: port, preferIPv4: nil)
        #expect(try await pair.established().isIPv6)
    }

    @Test(
        "localhost, with the client preferring either family (the RunLoop era: its only behaviour)",
        arguments: Era.allCases,
        [true, false]
    )
    func localhostWithPreference(era: Era, preferIPv4: Bool) async throws {
        let pair = Self.pair(era)
        defer { pair.close() }
        let port = try await pair.listen(.both)
        try await pair.connect(host: "localhost", port: port, preferIPv4: preferIPv4)
        let accepted = try await pair.established()
        if era == .gcd { #expect(preferIPv4 ? accepted.isIPv4 : accepted.isIPv6) }
    }

    @Test(
        "over TLS, a read longer than what is available waits for the rest instead of timing out",
        arguments: Era.allCases
    )
    func readLongerThanAvailableOverTLS(era: Era) async throws {
        let certificates = try await TLSTestCertificates.shared()
        let pair = Self.pair(era)
        defer { pair.close() }
        let port = try await pair.listen(.ipv4Only)
        try await pair.connect(host: "127.0.0.1", port: port, preferIPv4: nil)
        _ = try await pair.established()
        try await pair.secure(certificates)
        pair.serverWrite(50 * 1024)
        pair.serverWrite(50 * 1024)
        #expect(try await pair.clientRead(100 * 1024, timeout: 10) == 100 * 1024)
    }

    @Test("the same, 100 connections in a row", arguments: Era.allCases)
    func repeatedConnections(era: Era) async throws {
        let certificates = try await TLSTestCertificates.shared()
        for _ in 0..<100 {
            let pair = Self.pair(era)
            defer { pair.close() }
            let port = try await pair.listen(.ipv4Only)
            try await pair.connect(host: "127.0.0.1", port: port, preferIPv4: nil)
            _ = try await pair.established()
            try await pair.secure(certificates)
            pair.serverWrite(50 * 1024)
            pair.serverWrite(50 * 1024)
            #expect(try await pair.clientRead(100 * 1024, timeout: 10) == 100 * 1024)
        }
    }
}
