import NIOCore
import NIOPosix

/// Establishes one TCP (or unix-domain) channel: name resolution off the event loop, the preferred address family
/// first and the other after `alternateDelay` (first success wins, the loser is closed), optional local binding,
/// and one timeout over all of it. With a proxy, it connects to the proxy instead and completes only once the proxy
/// opened the tunnel to the target (``ProxyHandshakeHandler``; the timeout covers the handshake too). Everything
/// after `start` runs on `eventLoop`.
final class TCPConnector {
    enum Target {
        case host(String, port: Int)
        case address(SocketAddress)
        case unixPath(String)
    }

    struct Options {
        var ipv4Enabled = true
        var ipv6Enabled = true
        var preferIPv4 = true
        var alternateDelay = TimeAmount.milliseconds(300)
        var local: InterfaceResolver.Resolved?
        var timeout: TimeAmount?
        /// Connect through this proxy (not for unix paths).
        var proxy: ProxyConfiguration?
    }

    let eventLoop: any EventLoop
    private let target: Target
    private let options: Options
    private let promise: EventLoopPromise<any Channel>
    private var isFinished = false
    private var attempts: [EventLoopFuture<any Channel>] = []
    private var failures = 0
    private var attemptCount = 0
    private var timer: Scheduled<Void>?
    private var alternateTimer: Scheduled<Void>?
    private var alternate: SocketAddress?
    /// With a proxy: where the tunnel goes (`target` is then the proxy).
    private let tunnelTarget: ProxyTarget?
    /// With a proxy: the channel connected to it, while the handshake runs.
    private var handshakeChannel: (any Channel)?

    init(target: Target, options: Options, eventLoop: any EventLoop) {
        if let proxy = options.proxy, let tunnel = ProxyTarget(target) {
            self.target = .host(proxy.host, port: proxy.port)
            self.tunnelTarget = tunnel
        } else {
            self.target = target
            self.tunnelTarget = nil
        }
        self.options = options
        self.eventLoop = eventLoop
        self.promise = eventLoop.makePromise()
    }

    /// Starts connecting; call on the event loop. The future fails with an `GCDAsyncSocketError`.
    func start() -> EventLoopFuture<any Channel> {
        eventLoop.assertInEventLoop()
        if let timeout = options.timeout {
            timer = eventLoop.assumeIsolated().scheduleTask(in: max(timeout, .zero)) { [self] in
                finish(.failure(GCDAsyncSocketError.connectTimeout))
            }
        }
        switch target {
        case .unixPath(let path):
            attempt(.unix(path))
        case .address(let address):
            attempt(.inet(address))
        case .host(let host, let port):
            HostResolver.resolve(host: host, port: port, on: eventLoop).assumeIsolated().whenComplete { [self] result in
                switch result {
                case .failure(let error):
                    finish(.failure(error))
                case .success(let addresses):
                    let candidates = HostResolver.candidates(
                        from: addresses,
                        ipv4Enabled: options.ipv4Enabled,
                        ipv6Enabled: options.ipv6Enabled,
                        preferIPv4: options.preferIPv4
                    )
                    guard let first = candidates.first else {
                        let family = options.ipv4Enabled ? "IPv4" : "IPv6"
                        let disabled = options.ipv4Enabled ? "IPv6" : "IPv4"
                        finish(
                            .failure(
                                GCDAsyncSocketError(
                                    code: .other,
                                    message: "\(disabled) has been disabled and DNS lookup found no \(family) address."
                                )
                            )
                        )
                        return
                    }
                    attemptCount = candidates.count
                    attempt(.inet(first))
                    if candidates.count > 1 {
                        let second = candidates[1]
                        alternate = second
                        alternateTimer = eventLoop.assumeIsolated().scheduleTask(in: options.alternateDelay) { [self] in
                            alternateTimer = nil
                            alternate = nil
                            attempt(.inet(second))
                        }
                    }
                }
            }
        }
        return promise.futureResult
    }

    /// Abandons the attempt: the future fails with `error`, and a channel that connects later is closed.
    func cancel(with error: any Error) {
        finish(.failure(error))
    }

    private enum Destination {
        case inet(SocketAddress)
        case unix(String)
    }

    private func attempt(_ destination: Destination) {
        guard !isFinished else { return }
        var bootstrap = ClientBootstrap(group: eventLoop)
            .engineChannelOptions()
            .connectTimeout(.hours(24))
        let future: EventLoopFuture<any Channel>
        switch destination {
        case .unix(let path):
            future = bootstrap.connect(unixDomainSocketPath: path)
        case .inet(let address):
            if let local = options.local {
                let localAddress = address.protocol == .inet ? local.ipv4 : local.ipv6
                guard let localAddress else {
                    attemptFailed(
                        GCDAsyncSocketError.badParam("The interface has no address of the destination's family")
                    )
                    return
                }
                if local.fixesPort {
                    bootstrap = bootstrap.channelOption(.socketOption(.so_reuseaddr), value: 1)
                }
                bootstrap = bootstrap.bind(to: localAddress)
            }
            future = bootstrap.connect(to: address)
        }
        attempts.append(future)
        future.assumeIsolated().whenComplete { [self] result in
            switch result {
            case .success(let channel):
                if isFinished || handshakeChannel != nil {
                    channel.close(promise: nil)
                } else if let proxy = options.proxy, let tunnelTarget {
                    openTunnel(on: channel, through: proxy, to: tunnelTarget)
                } else {
                    finish(.success(channel))
                }
            case .failure(let error):
                attemptFailed(GCDAsyncSocketError.wrapping(error, function: "connect"))
            }
        }
    }

    /// Runs the proxy handshake on the first channel connected to the proxy (the other family's attempt is called
    /// off); the connect completes with the channel once the tunnel is up.
    private func openTunnel(on channel: any Channel, through proxy: ProxyConfiguration, to tunnel: ProxyTarget) {
        handshakeChannel = channel
        alternateTimer?.cancel()
        alternateTimer = nil
        alternate = nil
        let handler = ProxyHandshakeHandler(
            handshake: ProxyHandshake(proxy: proxy, target: tunnel),
            tunnel: eventLoop.makePromise()
        )
        do {
            try channel.pipeline.syncOperations.addHandler(handler)
        } catch {
            finish(.failure(GCDAsyncSocketError.wrapping(error, function: "connect")))
            return
        }
        handler.tunnel.futureResult.assumeIsolated().whenComplete { [self] result in
            switch result {
            case .success:
                guard !isFinished else { return }
                handshakeChannel = nil
                finish(.success(channel))
                // The caller added its handlers behind this one while the promise completed (future callbacks run
                // at once on the loop): the handler now hands them the tunnel's first bytes and leaves.
                channel.pipeline.syncOperations.removeHandler(handler, promise: nil)
            case .failure(let error):
                finish(.failure(error))
            }
        }
    }

    private func attemptFailed(_ error: any Error) {
        guard !isFinished, handshakeChannel == nil else { return }
        failures += 1
        if let timer = alternateTimer, let alternate {
            // The preferred family failed before the delay ran out: try the other one now.
            timer.cancel()
            alternateTimer = nil
            self.alternate = nil
            attempt(.inet(alternate))
            return
        }
        if failures >= max(attemptCount, 1) {
            finish(.failure(error))
        }
    }

    private func finish(_ result: Result<any Channel, any Error>) {
        guard !isFinished else { return }
        isFinished = true
        timer?.cancel()
        alternateTimer?.cancel()
        alternateTimer = nil
        if case .failure = result, let channel = handshakeChannel {
            handshakeChannel = nil
            channel.close(promise: nil)
        }
        promise.completeWith(result)
    }
}

@available(*, unavailable)
extension TCPConnector: Sendable {}
