import Dispatch
import Foundation

/// Reads lines from a pipe with a deadline: each read runs on a thread of its own, so a peer that never answers
/// costs a thread, never a hang.
final class LineReader: @unchecked Sendable {
    private let handle: FileHandle
    private var pending = Data()
    private let lock = NSLock()

    init(handle: FileHandle) {
        self.handle = handle
    }

    /// The next line (without its newline), or nil at the end of the stream or after `timeout` seconds.
    func nextLine(timeout: Double) -> String? {
        let done = DispatchSemaphore(value: 0)
        let result = ResultBox()
        Thread.detachNewThread { [self] in
            lock.lock()
            defer { lock.unlock() }
            while true {
                if let newline = pending.firstIndex(of: 0x0A) {
                    result.line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending = Data(pending[pending.index(after: newline)...])
                    break
                }
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
            }
            done.signal()
        }
        guard done.wait(timeout: .now() + timeout) == .success else { return nil }
        return result.line
    }

    /// The line read, written by the reading thread before the semaphore is signalled.
    private final class ResultBox: @unchecked Sendable {
        var line: String?
    }
}
