import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Output helpers: lines flushed at once (stdout may be a pipe), errors on stderr.
///
/// Everything goes through ``write(_:to:)``: when a reader goes away (`tether demo | head -1`), the process ends
/// quietly with 141, as SIGPIPE would end it (this process ignores SIGPIPE, so `FileHandle.write` would crash
/// instead); any other failed write ends it with 74 (`EX_IOERR`), since there is nowhere left to report it.
enum Terminal {
    static func line(_ text: String) {
        self.write(Data((text + "\n").utf8), to: STDOUT_FILENO)
    }

    static func error(_ text: String) {
        self.write(Data((text + "\n").utf8), to: STDERR_FILENO)
    }

    /// Bytes to standard output, as they are.
    static func output(_ data: Data) {
        self.write(data, to: STDOUT_FILENO)
    }

    /// Bytes to standard error, as they are (no newline added).
    static func errorOutput(_ data: Data) {
        self.write(data, to: STDERR_FILENO)
    }

    /// Writes all of `data` to `descriptor`, or ends the process (141 on a closed pipe, 74 on any other error).
    static func write(_ data: Data, to descriptor: Int32) {
        data.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                #if canImport(Glibc)
                let written = Glibc.write(descriptor, base + offset, bytes.count - offset)
                #else
                let written = Darwin.write(descriptor, base + offset, bytes.count - offset)
                #endif
                if written >= 0 {
                    offset += written
                    continue
                }
                let code = errno
                if code == EINTR { continue }
                exit(code == EPIPE ? 141 : 74)
            }
        }
    }

    /// Ends the process with 130 on SIGINT and 143 on SIGTERM, as the CLI contract says.
    static func exitOnSignals() {
        for (signalNumber, status) in [(SIGINT, Int32(130)), (SIGTERM, Int32(143))] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { exit(status) }
            source.resume()
            retained.append(source)
        }
    }

    /// Runs `handler` with the signal's number on SIGINT and SIGTERM instead of ending the process: for a command
    /// that leaves something to resume before it ends with 130 or 143 itself.
    static func onSignals(_ handler: @escaping @Sendable (Int32) -> Void) {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { handler(signalNumber) }
            source.resume()
            retained.append(source)
        }
    }

    nonisolated(unsafe) private static var retained: [any DispatchSourceSignal] = []
}
