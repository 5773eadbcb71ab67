import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// echo-runloop, echo-gcd and echo-async: each face's server against each face's client.
@Suite(.timeLimit(.minutes(1)))
struct EchoTests {
    static let faces = ["echo-runloop", "echo-gcd", "echo-async"]

    @Test(arguments: faces, faces)
    func theClientPrintsWhatTheServerEchoed(server: String, client: String) async throws {
        let serve = try Example(server, ["serve", "--port", "0"])
        defer { serve.stop() }
        let port = try listeningPort(try await serve.line("the listening line") { _ in true })
        let message = "hello from \(client) to \(server), ünïcödé"
        let run = try Example(client, ["client", "--port", "\(port)", "--message", message])
        let (status, stdout, stderr) = try await run.finish()
        #expect(status == 0, "stderr: \(stderr)")
        #expect(stdout == [message])
    }

    @Test(arguments: faces)
    func aServerServesClientsOneAfterAnother(face: String) async throws {
        let serve = try Example(face, ["serve", "--port", "0"])
        defer { serve.stop() }
        let port = try listeningPort(try await serve.line("the listening line") { _ in true })
        for index in 1...3 {
            let run = try Example(face, ["client", "--port", "\(port)", "--message", "message \(index)"])
            let (status, stdout, _) = try await run.finish()
            #expect(status == 0)
            #expect(stdout == ["message \(index)"])
        }
    }

    @Test(arguments: faces)
    func aRefusedConnectionExitsOneWithTheError(face: String) async throws {
        let refusing = try RefusingPort()
        defer { refusing.close() }
        let run = try Example(face, ["client", "--port", "\(refusing.port)", "--message", "anyone?"])
        let (status, stdout, stderr) = try await run.finish()
        #expect(status == 1)
        #expect(stdout.isEmpty)
        #expect(stderr.first?.hasPrefix("error: ") == true, "stderr: \(stderr)")
    }
}

/// A loopback TCP port that refuses connections: a socket bound to it and not listening (the kernel answers a
/// connection attempt with a reset), so that no other test or program can take the port meanwhile.
struct RefusingPort {
    let descriptor: Int32
    let port: Int

    init() throws {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(descriptor, address, length) == 0 && getsockname(descriptor, address, &length) == 0
            }
        }
        guard descriptor >= 0, bound else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() {
        #if canImport(Glibc)
        _ = Glibc.close(descriptor)
        #else
        _ = Darwin.close(descriptor)
        #endif
    }
}
