import Foundation
import NIOConcurrencyHelpers
import NIOPosix
import TetherHTTP

/// The `soak` scenario: everything at once for a long time (10 minutes by default) — TCP on both pairings, TLS on
/// both, UDP, HTTP with the cache and the four file and SQLite stores — with connections that close and reconnect
/// all the time, while this process's resident memory and open descriptors are sampled. Passes when every frame,
/// datagram, load and store round was right, memory grew less than 5 % after warm-up, and the descriptors came back
/// to the baseline once the work stopped and everything was closed.
enum SoakScenario {
    static func run(_ options: StressOptions) async throws -> Bool {
        let duration = options.double("--duration", default: 600)
        let interval = options.double("--interval", default: 10)
        let connections = options.int("--connections", default: 200)
        let tlsConnections = options.int("--tls-connections", default: 50)
        print(
            "\n== Soak: \(duration) s, a sample every \(interval) s; TCP \(connections) + \(connections) connections "
                + "(500 frames a life), TLS \(tlsConnections) + \(tlsConnections) (200 frames a life), UDP paced, "
                + "HTTP 16 loops with the cache, 4 stores"
        )
        // The runtime's own descriptors exist before the baseline is taken: the event loops', dispatch's, and those
        // Foundation's `Process` opens on first use and keeps (its monitoring thread's run loop: an epoll, an
        // eventfd and a timerfd per run loop, and CFSocket's wake-up pair of connected UDP sockets on 127.0.0.1).
        let material = try TLSMaterial.generate()
        defer { material.remove() }
        try StressPeer(arguments: ["serve-http"]).stop()
        for loop in MultiThreadedEventLoopGroup.singleton.makeIterator() { try await loop.submit {}.get() }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { continuation.resume() }
        }
        try await Task.sleep(for: .milliseconds(100))
        let baselineDescriptors = ProcessProbe.openDescriptors()
        let baselineResident = ProcessProbe.residentBytes()
        let baselineTargets = ProcessProbe.descriptorTargets()
        print("baseline: \(baselineDescriptors) descriptors, \(ProcessProbe.mib(baselineResident)) resident")

        let tls = material.clientSettings()
        let gcdPeer = try StressPeer(arguments: ["serve-tcp", "--face", "gcd"])
        let listenerPeer = try StressPeer(arguments: ["serve-tcp", "--face", "listener"])
        let gcdTLSPeer = try StressPeer(arguments: ["serve-tcp", "--face", "gcd"] + material.peerArguments)
        let listenerTLSPeer = try StressPeer(arguments: ["serve-tcp", "--face", "listener"] + material.peerArguments)
        let httpPeer = try StressPeer(arguments: ["serve-http"])
        let peers = [gcdPeer, listenerPeer, gcdTLSPeer, listenerTLSPeer, httpPeer]

        let stopped = NIOLockedValueBox(false)
        let stop: @Sendable () -> Bool = { stopped.withLockedValue { $0 } }
        let tcpA = RunControl()
        let tcpB = RunControl()
        let tlsA = RunControl()
        let tlsB = RunControl()
        let start = ProcessProbe.now()

        // Async-face clients: TCP (a) and TLS (a).
        let asyncEnded = NIOLockedValueBox(0)
        let asyncCount = connections + tlsConnections
        for index in 0..<connections {
            Task {
                await AsyncFaceClients.churn(
                    id: UInt32(index),
                    port: gcdPeer.port,
                    tls: nil,
                    control: tcpA,
                    framesPerLife: 500
                )
                asyncEnded.withLockedValue { $0 += 1 }
            }
        }
        for index in 0..<tlsConnections {
            Task {
                await AsyncFaceClients.churn(
                    id: UInt32(index),
                    port: gcdTLSPeer.port,
                    tls: tls,
                    control: tlsA,
                    framesPerLife: 200
                )
                asyncEnded.withLockedValue { $0 += 1 }
            }
        }
        // Delegate-face clients: TCP (b) and TLS (b).
        let gcdClients = GCDFaceClients(
            count: connections,
            port: listenerPeer.port,
            tls: nil,
            control: tcpB,
            framesPerLife: 500
        )
        let gcdTLSClients = GCDFaceClients(
            count: tlsConnections,
            port: listenerTLSPeer.port,
            tls: tls,
            control: tlsB,
            framesPerLife: 200
        )
        _ = await gcdClients.connect(batch: 100)
        _ = await gcdTLSClients.connect(batch: 50)
        gcdClients.start()
        gcdTLSClients.start()

        // UDP: 5-second floods, 64 datagrams of 512 bytes then 10 ms of rest, one after another.
        let udpTotals = NIOLockedValueBox(UDPScenario.Result())
        let udpFloods = NIOLockedValueBox(0)
        let udpTask = Task {
            while !stop() {
                do {
                    let result = try await UDPScenario.flood(
                        seconds: 5,
                        size: 512,
                        burst: 64,
                        pause: .milliseconds(10),
                        stop: stop
                    )
                    udpTotals.withLockedValue { totals in
                        totals.sent += result.sent
                        totals.sendErrors += result.sendErrors
                        totals.tally.add(result.tally)
                        totals.kernelDrops = (totals.kernelDrops ?? 0) + (result.kernelDrops ?? -1_000_000_000)
                    }
                    udpFloods.withLockedValue { $0 += 1 }
                } catch {
                    udpTotals.withLockedValue { $0.sendErrors += 1 }
                }
            }
        }
        // HTTP: 16 loops through one cache.
        let httpTotals = NIOLockedValueBox(HTTPScenario.Totals())
        let httpHistogram = LatencyHistogram()
        let httpTask = Task {
            await HTTPScenario.load(
                port: httpPeer.port,
                concurrency: 16,
                cache: HTTPResponseCache(memoryCapacity: 4 << 20),
                histogram: httpHistogram,
                totals: httpTotals,
                stop: stop
            )
        }
        // Stores.
        let storeTotals = NIOLockedValueBox(StoreWorkload.Totals())
        let storeTask = Task { await StoreWorkload.run(totals: storeTotals, stop: stop) }

        // Sampling.
        var report = SoakReport()
        func sample() {
            report.samples.append(
                SoakReport.Sample(
                    seconds: ProcessProbe.now() - start,
                    resident: ProcessProbe.residentBytes(),
                    descriptors: ProcessProbe.openDescriptors(),
                    peersResident: peers.map(\.residentBytes).reduce(0, +)
                )
            )
            let last = report.samples.last!
            let frames = [tcpA, tcpB, tlsA, tlsB].map { $0.snapshot.tally.received }.reduce(0, +)
            print(
                String(
                    format: "  t %5.0f s: RSS %@, %d descriptors, peers %@, ",
                    last.seconds,
                    ProcessProbe.mib(last.resident),
                    last.descriptors,
                    ProcessProbe.mib(last.peersResident)
                )
                    + "frames \(frames), HTTP loads \(httpTotals.withLockedValue { $0.loads }), "
                    + "store rounds \(storeTotals.withLockedValue { $0.rounds }), UDP floods \(udpFloods.withLockedValue { $0 }); "
                    + "load average \(ProcessProbe.loadAverage())"
            )
        }
        sample()
        while ProcessProbe.now() - start < duration {
            let next = min(interval, duration - (ProcessProbe.now() - start))
            try await Task.sleep(for: .seconds(max(0.01, next)))
            sample()
        }

        // Stop everything, each wait with a deadline.
        stopped.withLockedValue { $0 = true }
        for control in [tcpA, tcpB, tlsA, tlsB] { control.stop() }
        let gcdEnded = await gcdClients.waitForEnd(seconds: 40)
        let gcdTLSEnded = await gcdTLSClients.waitForEnd(seconds: 40)
        let asyncDone = await GCDFaceClients.wait(seconds: 40) { asyncEnded.withLockedValue { $0 } >= asyncCount }
        let othersDone = await Deadline.run(seconds: 60) {
            await udpTask.value
            await httpTask.value
            await storeTask.value
        }
        let wall = ProcessProbe.now() - start
        var peerStats: [[String: String]] = []
        for peer in peers { peerStats.append(peer.stop()) }
        // Descriptors back to the baseline: closed connections of the HTTP pool and the sockets' last closes may
        // take a moment; wait for them at most 30 s.
        let descriptorsBack = await GCDFaceClients.wait(seconds: 30) {
            ProcessProbe.openDescriptors() <= baselineDescriptors
        }
        let finalDescriptors = ProcessProbe.openDescriptors()

        // Report.
        print("\n" + report.table())
        print("\nresident memory of this process over time:\n" + report.chart())
        var passed = true
        print("\nsummary after \(String(format: "%.0f", wall)) s:")
        for (name, control) in [
            ("TCP (a) GCD server / TCPConnection", tcpA), ("TCP (b) TCPListener / GCDAsyncSocket", tcpB),
            ("TLS (a) GCD server / TCPConnection", tlsA), ("TLS (b) TCPListener / GCDAsyncSocket", tlsB),
        ] {
            let totals = control.snapshot
            let ok = totals.clean && totals.errors == 0 && control.failedConnects == 0
            passed = passed && ok
            print(
                "  \(name): \(totals.tally.received) frames in \(totals.lives) connection lives, lost \(totals.lost), "
                    + "duplicated \(totals.tally.duplicated), reordered \(totals.tally.reordered), corrupted \(totals.tally.corrupted), "
                    + "errors \(totals.errors), failed connects \(control.failedConnects); latency \(control.histogram.summary()) → \(ok ? "ok" : "FAIL")"
            )
            for error in totals.firstErrors { print("    error: \(error)") }
        }
        let udp = udpTotals.withLockedValue { $0 }
        let udpOK = udp.clean
        passed = passed && udpOK
        print(
            "  UDP: \(udpFloods.withLockedValue { $0 }) floods, \(udp.sent) sent, \(udp.tally.received) received, "
                + "kernel drops \(udp.kernelDrops ?? -1), unaccounted \(udp.unaccounted), duplicated \(udp.tally.duplicated), "
                + "reordered \(udp.tally.reordered), corrupted \(udp.tally.corrupted), send errors \(udp.sendErrors) → \(udpOK ? "ok" : "FAIL")"
        )
        let http = httpTotals.withLockedValue { $0 }
        passed = passed && http.errors == 0
        let served = Int(peerStats[4]["requests"] ?? "") ?? -1
        print(
            "  HTTP: \(http.loads) loads, \(http.loads - served) from the cache, \(peerStats[4]["not_modified"] ?? "?") revalidated, "
                + "errors \(http.errors); latency \(httpHistogram.summary()) → \(http.errors == 0 ? "ok" : "FAIL")"
        )
        for error in http.firstErrors { print("    error: \(error)") }
        let stores = storeTotals.withLockedValue { $0 }
        passed = passed && stores.errors == 0
        print(
            "  stores: \(stores.rounds) rounds, \(stores.changes) changes, errors \(stores.errors) → \(stores.errors == 0 ? "ok" : "FAIL")"
        )
        for error in stores.firstErrors { print("    error: \(error)") }
        let serverCorrupted = peerStats.map { Int($0["corrupted"] ?? "0") ?? 0 }.reduce(0, +)
        passed = passed && serverCorrupted == 0
        print(
            "  servers: corrupted frames \(serverCorrupted); CPU (getrusage) "
                + peerStats.map { "\($0["cpu_user"] ?? "?")+\($0["cpu_sys"] ?? "?") s" }.joined(separator: ", ")
        )
        let everythingEnded = gcdEnded && gcdTLSEnded && asyncDone && othersDone
        passed = passed && everythingEnded
        print("  every client ended in time: \(everythingEnded)")
        let growthOK = report.growth < 0.05
        passed = passed && growthOK
        print(
            String(
                format: "  memory after warm-up (%d of %d samples skipped): growth %+.1f %%, slope %+.2f MiB/min → %@",
                report.samples.count - report.steady.count,
                report.samples.count,
                report.growth * 100,
                report.slopeMiBPerMinute,
                growthOK ? "ok" : "FAIL"
            )
        )
        passed = passed && descriptorsBack
        print(
            "  descriptors: baseline \(baselineDescriptors), at the end \(finalDescriptors) → \(descriptorsBack ? "ok" : "FAIL")"
        )
        if !descriptorsBack {
            for (kind, count) in ProcessProbe.descriptorTargets().sorted(by: { $0.value > $1.value }) {
                print("    \(count) × \(kind) (at the baseline \(baselineTargets[kind] ?? 0))")
            }
        }
        let cpu = ProcessProbe.cpuSeconds()
        print(
            String(
                format: "  CPU of this process (getrusage): user %.1f s, sys %.1f s, beside %.0f s wall",
                cpu.user,
                cpu.system,
                wall
            )
        )
        return passed
    }
}
