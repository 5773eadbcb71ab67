import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Output helpers: lines flushed at once (stdout may be a pipe), errors on stderr.
enum Terminal {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
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

    nonisolated(unsafe) private static var retained: [any DispatchSourceSignal] = []
}
