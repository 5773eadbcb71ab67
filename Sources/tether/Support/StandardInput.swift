import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Standard input, read in chunks as they come.
enum StandardInput {
    /// The bytes one `read(2)` of standard input returns, read on a thread of its own (a blocking read must not
    /// hold a thread of the cooperative pool); empty at the end of the input.
    ///
    /// A standard input that cannot be read (closed, or open only for writing) counts as the end of the input, with
    /// one line on standard error: `FileHandle.availableData` would stop the process instead.
    static func nextChunk() async -> Data {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: self.readOnce())
            }
        }
    }

    private static func readOnce() -> Data {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count > 0 { return Data(buffer[0..<count]) }
            if count == 0 { return Data() }
            let code = errno
            if code == EINTR { continue }
            Terminal.error("error: cannot read standard input: \(String(cString: strerror(code))); treated as its end")
            return Data()
        }
    }
}
