import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension TCPKeepalive {
    /// One socket option to set: level, name, value.
    struct Option: Equatable {
        let level: NIOBSDSocket.OptionLevel
        let name: NIOBSDSocket.Option
        let value: Int32
    }

    /// The socket options that put this value in force, in the order they are set: `SO_KEEPALIVE` always (0 turns
    /// keepalive off again on a connected socket), then the TCP-level values that are given. `TCP_USER_TIMEOUT` 0
    /// restores the system's default when a value had been set before.
    var socketOptions: [Option] {
        var options = [Option(level: .socket, name: .so_keepalive, value: isEnabled ? 1 : 0)]
        let tcp = NIOBSDSocket.OptionLevel.tcp
        #if os(Linux)
        if let idle, let seconds = Self.wholeSeconds(idle) {
            options.append(Option(level: tcp, name: NIOBSDSocket.Option(rawValue: TCP_KEEPIDLE), value: Int32(seconds)))
        }
        #else
        if let idle, let seconds = Self.wholeSeconds(idle) {
            options.append(
                Option(level: tcp, name: NIOBSDSocket.Option(rawValue: TCP_KEEPALIVE), value: Int32(seconds))
            )
        }
        #endif
        if let interval, let seconds = Self.wholeSeconds(interval) {
            options.append(
                Option(level: tcp, name: NIOBSDSocket.Option(rawValue: TCP_KEEPINTVL), value: Int32(seconds))
            )
        }
        if let count {
            options.append(Option(level: tcp, name: NIOBSDSocket.Option(rawValue: TCP_KEEPCNT), value: Int32(count)))
        }
        #if os(Linux)
        let milliseconds = userTimeout.flatMap(Self.wholeMilliseconds) ?? 0
        options.append(
            Option(level: tcp, name: NIOBSDSocket.Option(rawValue: TCP_USER_TIMEOUT), value: Int32(milliseconds))
        )
        #endif
        return options
    }

    /// Sets the options on a connected TCP channel; call on its event loop. A unix-domain channel is left alone.
    /// - Throws: the system's refusal (`IOError`).
    func apply(to channel: any Channel) throws {
        guard channel.remoteAddress?.protocol != .unix, let options = channel.syncOptions else { return }
        for option in socketOptions {
            try options.setOption(
                ChannelOptions.Types.SocketOption(level: option.level, name: option.name),
                value: ChannelOptions.Types.SocketOption.Value(option.value)
            )
        }
    }
}
