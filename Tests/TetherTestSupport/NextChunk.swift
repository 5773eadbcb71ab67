public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension FileHandle {
    /// The bytes one `read(2)` returns (waiting until there are some, or the end), or empty at the end.
    ///
    /// Use this instead of `availableData` in tests: that one stops the whole test process on a read error (a
    /// descriptor closed under the reader), taking every other test with it. Here an error ends the stream like
    /// the end of it, and the test that reads fails on what it did not get.
    public func nextChunk(maximum: Int = 1 << 16) -> Data {
        var buffer = [UInt8](repeating: 0, count: maximum)
        while true {
            let count = buffer.withUnsafeMutableBytes { bytes in
                #if canImport(Glibc)
                Glibc.read(self.fileDescriptor, bytes.baseAddress, bytes.count)
                #else
                Darwin.read(self.fileDescriptor, bytes.baseAddress, bytes.count)
                #endif
            }
            if count < 0, errno == EINTR { continue }
            return count > 0 ? Data(buffer[0..<count]) : Data()
        }
    }
}
