import NIOCore

/// What a face asks of one connection's liveness: keepalive, the idle detector, the heartbeat.
struct LivenessSettings: Equatable, Sendable {
    var keepalive = TCPKeepalive.off
    var idle = IdleTimeouts.none
    var heartbeat: Heartbeat?

    /// Nothing asked: no driver is needed.
    var isDefault: Bool { self == LivenessSettings() }

    /// The machine's part (the timers), on the engine's clock.
    var machineConfiguration: LivenessMachine.Configuration {
        LivenessMachine.Configuration(
            readIdle: idle.read.map { TimeAmount($0) },
            writeIdle: idle.write.map { TimeAmount($0) },
            allIdle: idle.all.map { TimeAmount($0) },
            heartbeat: heartbeat.map {
                LivenessMachine.HeartbeatPlan(
                    interval: TimeAmount($0.interval),
                    timeout: TimeAmount($0.timeout),
                    confirmsReply: $0.reply == .confirmedByApplication
                )
            }
        )
    }
}

/// The engine's liveness state: the settings, their machine, and the timers it armed. Lives on the engine's loop.
final class LivenessDriver {
    var settings: LivenessSettings
    var machine = LivenessMachine()
    var timers: [LivenessMachine.Timer: Scheduled<Void>] = [:]
    /// Whether the keepalive in `settings` has been set on the channel.
    var appliedKeepalive: TCPKeepalive?

    init(settings: LivenessSettings) {
        self.settings = settings
    }
}

@available(*, unavailable)
extension LivenessDriver: Sendable {}
