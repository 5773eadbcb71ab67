import Foundation
import NIOSSL
import TetherSockets

/// The child-process side of ``StressPeer``: `serve-tcp --face gcd|listener [--cert PEM --key PEM]` or
/// `serve-http`. Prints `listening on 127.0.0.1:PORT`, serves until `stop` (or the end of standard input), then
/// prints `stats …` and exits.
enum PeerCommand {
    static func run(_ options: StressOptions) async throws -> Never {
        let limit = ProcessProbe.raiseDescriptorLimit()
        let counters = ServerCounters()
        counters.add("nofile", Int(limit.after))
        let port: Int
        var keep: [AnyObject] = []
        switch options.command {
        case "serve-tcp":
            var tls: TLSSettings?
            if let cert = options.value("--cert"), let key = options.value("--key") {
                tls = TLSSettings.server(
                    certificateChain: try NIOSSLCertificate.fromPEMFile(cert),
                    privateKey: try NIOSSLPrivateKey(file: key, format: .pem)
                )
            }
            if options.value("--face") == "listener" {
                let server = try await ListenerEchoServer.start(tls: tls, counters: counters)
                keep.append(server)
                port = server.port
            } else {
                let server = try GCDEchoServer(tls: tls, counters: counters)
                keep.append(server)
                port = server.port
            }
        case "serve-http":
            let server = try await HTTPStressServer.start(counters: counters)
            keep.append(server)
            port = server.port
        default:
            throw StressError("unknown peer command \(options.command)")
        }
        print("listening on 127.0.0.1:\(port)")
        // Standard input: `stop` or its end stops the peer.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                while let line = readLine(), line != "stop" {}
                continuation.resume()
            }
        }
        let cpu = ProcessProbe.cpuSeconds()
        var fields = [
            String(format: "cpu_user=%.2f", cpu.user), String(format: "cpu_sys=%.2f", cpu.system),
            "rss=\(ProcessProbe.residentBytes())",
        ]
        for (name, value) in counters.snapshot().sorted(by: { $0.key < $1.key }) { fields.append("\(name)=\(value)") }
        print("stats " + fields.joined(separator: " "))
        withExtendedLifetime(keep) {}
        exit(0)
    }
}
