#if os(Linux)
import CTetherNetlink
import Foundation
import Glibc
import TetherConcurrency
import TetherResolver

/// The Linux back-end: an rtnetlink socket read on a thread of its own (not an event loop), an initial dump of
/// links, addresses, policy rules and routes, bursts coalesced, a re-dump after an overrun, and each evaluation reported when
/// its path differs from the last one.
final class NetlinkPathMonitor: NetworkPathErrorReporting {
    /// How long a failed socket waits before it is opened again.
    static let retryInterval: Duration = .seconds(5)
    /// How long the initial dump inside `start` may take.
    static let initialDumpTimeout: Duration = .seconds(5)

    private let target: ReachabilityTarget
    private let classifier: InterfaceClassifier
    private let current = LockedBox<NetlinkMonitorRun?>(nil)

    init(target: ReachabilityTarget, classifier: InterfaceClassifier = InterfaceClassifier()) {
        self.target = target
        self.classifier = classifier
    }

    func start(_ handler: @escaping @Sendable (NetworkPath) -> Void) throws {
        try start(handler, errorHandler: { _ in })
    }

    func start(
        _ handler: @escaping @Sendable (NetworkPath) -> Void,
        errorHandler: @escaping @Sendable (any Error) -> Void
    ) throws {
        stop()
        let run = try NetlinkMonitorRun(
            target: target,
            classifier: classifier,
            handler: handler,
            errorHandler: errorHandler
        )
        try run.synchronise(timeout: Self.initialDumpTimeout)
        current.withLock { $0 = run }
        run.startThread()
    }

    func stop() {
        current.withLock { run in
            defer { run = nil }
            return run
        }?.cancel()
    }
}

/// One start of the netlink monitor: its socket, its session and its thread.
final class NetlinkMonitorRun {
    private let target: ReachabilityTarget
    private let classifier: InterfaceClassifier
    private let handler: @Sendable (NetworkPath) -> Void
    private let errorHandler: @Sendable (any Error) -> Void
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let cancelled = LockedBox(false)
    private var socket: NetlinkSocket?
    private var session: NetlinkSession
    private var coalescer = ChangeCoalescer()
    private var lastReported: NetworkPath?

    init(
        target: ReachabilityTarget,
        classifier: InterfaceClassifier,
        handler: @escaping @Sendable (NetworkPath) -> Void,
        errorHandler: @escaping @Sendable (any Error) -> Void
    ) throws {
        let socket = try NetlinkSocket()
        var ends: [Int32] = [-1, -1]
        // Close-on-exec from the start: set afterwards, a process spawned by another thread in between would
        // inherit both ends.
        guard tether_pipe_cloexec_nonblocking(&ends) == 0 else {
            throw NetworkReachabilityError.posix(.backendUnavailable, "pipe2() failed", errno: errno)
        }
        self.target = target
        self.classifier = classifier
        self.handler = handler
        self.errorHandler = errorHandler
        wakeRead = ends[0]
        wakeWrite = ends[1]
        self.socket = socket
        session = NetlinkSession(portID: socket.portID)
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
    }

    private var isCancelled: Bool { cancelled.withLock { $0 } }

    /// Dumps the kernel's state and reports the first evaluation before returning (runs on the starting thread).
    func synchronise(timeout: Duration) throws {
        guard let socket else { return }
        try perform(session.requestFullDump(), on: socket)
        let deadline = ContinuousClock.now + timeout
        while !session.isSynchronised {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else {
                throw NetworkReachabilityError(code: .timedOut, message: "the netlink state dump did not finish")
            }
            var descriptor = pollfd(fd: socket.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Self.milliseconds(remaining))
            if ready < 0, errno != EINTR {
                throw NetworkReachabilityError.posix(.backendFailed, "poll() failed", errno: errno)
            }
            if ready > 0 {
                try drain(socket)
            }
        }
        coalescer.reset()
        evaluateAndReport()
    }

    func startThread() {
        let thread = Thread { [self] in self.run() }
        thread.name = "tether.reachability.netlink"
        thread.start()
    }

    /// Stops the thread; no path is reported after this returns (the thread may finish a `getaddrinfo` first).
    func cancel() {
        cancelled.withLock { $0 = true }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    private func run() {
        while !isCancelled {
            guard let socket else {
                if waitForWake(timeout: NetlinkPathMonitor.retryInterval) { break }
                reconnect()
                continue
            }
            do {
                var descriptors = [
                    pollfd(fd: socket.fileDescriptor, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
                ]
                // While a dump is in flight its replies are what we wait for; evaluating has to wait for them.
                let deadline = session.isSynchronised ? coalescer.deadline : nil
                let timeout = deadline.map { Self.milliseconds($0 - ContinuousClock.now) } ?? -1
                let ready = poll(&descriptors, 2, timeout)
                if ready < 0, errno != EINTR {
                    throw NetworkReachabilityError.posix(.backendFailed, "poll() failed", errno: errno)
                }
                if descriptors[1].revents != 0 { break }
                if descriptors[0].revents != 0 {
                    try drain(socket)
                }
                if session.isSynchronised, coalescer.isDue(at: .now) {
                    coalescer.reset()
                    evaluateAndReport()
                }
            } catch {
                // Keep the last good status; open a new socket after the retry interval.
                self.socket = nil
                coalescer.reset()
                errorHandler(error)
            }
        }
    }

    private func reconnect() {
        do {
            let socket = try NetlinkSocket()
            session = NetlinkSession(portID: socket.portID)
            self.socket = socket
            try perform(session.requestFullDump(), on: socket)
            coalescer.noteChange(at: .now)
        } catch {
            socket = nil
            errorHandler(error)
        }
    }

    /// Reads what the socket holds now (a bounded number of datagrams, so evaluations are not starved).
    private func drain(_ socket: NetlinkSocket) throws {
        for _ in 0..<256 {
            switch try socket.receive() {
            case .wouldBlock:
                return
            case .overrun:
                // Events were lost: start over from a full dump.
                try perform(session.requestFullDump(), on: socket)
                coalescer.noteChange(at: .now)
            case .messages(let messages):
                for message in messages {
                    let outcome = session.receive(message)
                    if outcome.changed {
                        coalescer.noteChange(at: .now)
                    }
                    if let error = outcome.error {
                        errorHandler(error)
                    }
                    try perform(outcome.actions, on: socket)
                }
            }
        }
    }

    private func perform(_ actions: [NetlinkSession.Action], on socket: NetlinkSocket) throws {
        for case .send(let message) in actions {
            try socket.send(message)
        }
    }

    private func evaluateAndReport() {
        let destination: RoutingState.Destination
        switch target {
        case .defaultRoute: destination = .defaultRoute
        case .address(let address): destination = .addresses([address])
        case .domain(let host): destination = .addresses(Self.addresses(of: host))
        }
        // `uidrange` rules select by the user a socket belongs to: this process's.
        let path = session.state.evaluate(destination, userID: getuid(), classify: classifier.classify)
        guard path != lastReported, !isCancelled else { return }
        lastReported = path
        handler(path)
    }

    /// The IPv4 and IPv6 addresses of `host` through TetherResolver's `NameResolver`, in the resolver's order, without
    /// duplicates; empty when it does not resolve. Blocking `getaddrinfo` on the calling thread: only ever the monitor's
    /// own thread or the one inside `startMonitoring`, never an event loop.
    private static func addresses(of host: String) -> [IPAddressBytes] {
        var result: [IPAddressBytes] = []
        for address in (try? NameResolver.lookup(host: host, port: 0)) ?? [] {
            if let bytes = IPAddressBytes(address), !result.contains(bytes) { result.append(bytes) }
        }
        return result
    }

    /// Waits for `cancel()` up to `timeout`; returns whether it was cancelled.
    private func waitForWake(timeout: Duration) -> Bool {
        var descriptor = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, Self.milliseconds(timeout))
        return isCancelled
    }

    /// A poll timeout in whole milliseconds, rounded up, never negative.
    private static func milliseconds(_ duration: Duration) -> Int32 {
        guard duration > .zero else { return 0 }
        let (seconds, attoseconds) = duration.components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }
}
// Sendable: the mutable vars are used by the starting thread, then only by the monitor thread; `cancelled` is locked.
extension NetlinkMonitorRun: @unchecked Sendable {}
#endif
