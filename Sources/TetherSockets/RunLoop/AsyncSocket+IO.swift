public import Foundation
import TetherConcurrency

extension AsyncSocket {
    /// Counts a read or write the current life will report, and returns the engine face to hand it to; nil when it
    /// must be ignored (not started, or after `disconnectAfter…`).
    private func admit(read: Bool) -> GCDAsyncSocket? {
        state.withLock { s in
            guard s.phase != .idle, !s.forbidsIO, let core = s.core else { return nil }
            if read { s.pendingReads += 1 } else { s.pendingWrites += 1 }
            return core
        }
    }

    private static func offsetFits(_ buffer: NSMutableData?, _ offset: UInt) -> Bool {
        offset <= UInt(buffer?.length ?? 0)
    }

    // MARK: reading

    /// Reads whatever is available (at least one byte): what one read from the socket brought, small reads that
    /// arrived together joined. A negative timeout never times out.
    public func readData(withTimeout timeout: TimeInterval, tag: Int) {
        admit(read: true)?.readData(withTimeout: timeout, tag: tag)
    }

    /// Reads whatever is available into `buffer` at `offset` (ignored when `offset` is past its end).
    public func readData(withTimeout timeout: TimeInterval, buffer: NSMutableData?, bufferOffset offset: UInt, tag: Int)
    {
        readData(withTimeout: timeout, buffer: buffer, bufferOffset: offset, maxLength: 0, tag: tag)
    }

    /// Reads what is available, at most `length` bytes (0: no limit), into `buffer` at `offset`.
    public func readData(
        withTimeout timeout: TimeInterval,
        buffer: NSMutableData?,
        bufferOffset offset: UInt,
        maxLength length: UInt,
        tag: Int
    ) {
        guard Self.offsetFits(buffer, offset) else { return }
        admit(read: true)?.readData(
            withTimeout: timeout,
            buffer: buffer,
            bufferOffset: offset,
            maxLength: length,
            tag: tag
        )
    }

    /// Reads exactly `length` bytes (ignored when 0); partial progress is reported.
    public func readData(toLength length: UInt, withTimeout timeout: TimeInterval, tag: Int) {
        readData(toLength: length, withTimeout: timeout, buffer: nil, bufferOffset: 0, tag: tag)
    }

    /// Reads exactly `length` bytes into `buffer` at `offset`.
    public func readData(
        toLength length: UInt,
        withTimeout timeout: TimeInterval,
        buffer: NSMutableData?,
        bufferOffset offset: UInt,
        tag: Int
    ) {
        guard length > 0, Self.offsetFits(buffer, offset) else { return }
        admit(read: true)?.readData(
            toLength: length,
            withTimeout: timeout,
            buffer: buffer,
            bufferOffset: offset,
            tag: tag
        )
    }

    /// Reads up to and including `data` (ignored when empty); no byte after it is lost.
    public func readData(to data: Data, withTimeout timeout: TimeInterval, tag: Int) {
        readData(to: data, withTimeout: timeout, buffer: nil, bufferOffset: 0, maxLength: 0, tag: tag)
    }

    /// Reads up to and including `data`, at most `length` bytes (0: no limit; ignored when shorter than `data`).
    /// Past `length` without the separator, the socket closes with ``AsyncSocketError/Code/readMaxedOutError``.
    public func readData(to data: Data, withTimeout timeout: TimeInterval, maxLength length: UInt, tag: Int) {
        readData(to: data, withTimeout: timeout, buffer: nil, bufferOffset: 0, maxLength: length, tag: tag)
    }

    /// Reads up to and including `data` into `buffer` at `offset`.
    public func readData(
        to data: Data,
        withTimeout timeout: TimeInterval,
        buffer: NSMutableData?,
        bufferOffset offset: UInt,
        tag: Int
    ) {
        readData(to: data, withTimeout: timeout, buffer: buffer, bufferOffset: offset, maxLength: 0, tag: tag)
    }

    /// Reads up to and including `data` into `buffer` at `offset`, at most `length` bytes.
    public func readData(
        to data: Data,
        withTimeout timeout: TimeInterval,
        buffer: NSMutableData?,
        bufferOffset offset: UInt,
        maxLength length: UInt,
        tag: Int
    ) {
        guard !data.isEmpty, length == 0 || length >= UInt(data.count), Self.offsetFits(buffer, offset) else { return }
        admit(read: true)?.readData(
            to: data,
            withTimeout: timeout,
            buffer: buffer,
            bufferOffset: offset,
            maxLength: length,
            tag: tag
        )
    }

    // MARK: writing

    /// Queues a write (ignored when `data` is empty); `onSocket(_:didWriteDataWithTag:)` follows.
    public func write(_ data: Data, withTimeout timeout: TimeInterval, tag: Int) {
        guard !data.isEmpty else { return }
        admit(read: false)?.write(data, withTimeout: timeout, tag: tag)
    }

    // MARK: progress

    /// The current read's progress: NaN when no read is current (or a `startTLS` is), with the out-parameters
    /// zeroed; `done/total` for a length read; 1.0 for other reads (total 0), even at 0 bytes.
    public func progressOfRead(
        returningTag tag: UnsafeMutablePointer<Int>?,
        bytesDone done: UnsafeMutablePointer<UInt>?,
        total: UnsafeMutablePointer<UInt>?
    ) -> Float {
        Self.report(currentCore?.readProgress, tag: tag, done: done, total: total)
    }

    /// The current write's progress: NaN (out-parameters zeroed) when none is current, else `done/total`.
    public func progressOfWrite(
        returningTag tag: UnsafeMutablePointer<Int>?,
        bytesDone done: UnsafeMutablePointer<UInt>?,
        total: UnsafeMutablePointer<UInt>?
    ) -> Float {
        Self.report(currentCore?.writeProgress, tag: tag, done: done, total: total)
    }

    private static func report(
        _ progress: GCDAsyncSocket.IOProgress?,
        tag: UnsafeMutablePointer<Int>?,
        done: UnsafeMutablePointer<UInt>?,
        total: UnsafeMutablePointer<UInt>?
    ) -> Float {
        tag?.pointee = progress?.tag ?? 0
        done?.pointee = UInt(progress?.bytesDone ?? 0)
        total?.pointee = UInt(progress?.total ?? 0)
        guard let progress else { return .nan }
        return Float(progress.fractionCompleted)
    }
}
