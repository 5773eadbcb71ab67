public import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import TetherConcurrency

extension GCDAsyncSocket {
    /// The adapter of the current life when it takes operations now (started, not told to disconnect after I/O).
    private func operationAdapter() -> EngineAdapter? {
        state.withLock { s in s.lifecycle.acceptsOperations ? s.adapter : nil }
    }

    private func queueRead(_ kind: ReadKind, timeout: TimeInterval, tag: Int, destination: CallerBuffer?) {
        let current = state.withLock { s in
            s.lifecycle.acceptsOperations
                ? (
                    s.adapter, s.machine, s.lifecycle.life,
                    s.delivery == .delegateQueue || s.configuration.servesBufferedReadsOnCaller
                ) : nil
        }
        guard let (maybeAdapter, machine, life, servesOffLoop) = current, let adapter = maybeAdapter else { return }
        // A read issued off the loop that the buffered bytes satisfy completes here, without a round trip through
        // the loop; its callback is still dispatched onto the delegate queue, after every one produced before it.
        if servesOffLoop, let machine, !adapter.eventLoop.inEventLoop, !adapter.hasPendingOperations,
            let served = machine.withLock({ $0.readFromBuffer(kind) })
        {
            logger?.trace("read", metadata: ["tag": "\(tag)", "bytes": "\(served.bytes.count)"])
            let data = served.bytes
            deliver(life: life) { sock, delegate in
                delegate.socket(sock, didRead: destination?.store(data) ?? data, withTag: tag)
            }
            if served.wakesLoop { adapter.withEngine { $0.requestMoreDataIfNeeded() } }
            return
        }
        let time = TimeoutValue.timeout(timeout)
        let onLoop = adapter.runOnLoopNow { engine in
            _ = engine.enqueueRead(kind, timeout: time, waiter: .delegate(tag: tag, destination: destination))
        }
        guard !onLoop else { return }
        adapter.withEngine { engine in
            _ = engine.enqueueRead(kind, timeout: time, waiter: .delegate(tag: tag, destination: destination))
        }
    }

    private static func destination(_ buffer: NSMutableData?, offset: UInt) -> CallerBuffer?? {
        guard let buffer else { return .some(nil) }
        guard offset <= UInt(buffer.length) else { return nil }
        return .some(CallerBuffer(data: buffer, offset: Int(offset)))
    }

    // MARK: reading

    /// Reads whatever is available (≥ 1 byte); the result arrives as `socket(_:didRead:withTag:)`.
    ///
    /// "Available" is what one read from the socket brought (small reads that arrived together come joined): a
    /// stream that runs ahead of its reader is delivered over several of these reads, one socket read each, so
    /// that no bytes are copied to join them. Re-issued from the callback, the next one completes from the bytes
    /// already buffered without a visit to the event loop.
    /// - Parameters:
    ///   - timeout: seconds from when the read becomes current; negative = none, 0 = at once.
    ///   - tag: echoed in the callbacks.
    public func readData(withTimeout timeout: TimeInterval, tag: Int) {
        queueRead(.available(maxLength: 0), timeout: timeout, tag: tag, destination: nil)
    }

    /// Reads whatever is available into `buffer` at `offset` (ignored when `offset > buffer.length`).
    public func readData(withTimeout timeout: TimeInterval, buffer: NSMutableData?, bufferOffset offset: UInt, tag: Int)
    {
        readData(withTimeout: timeout, buffer: buffer, bufferOffset: offset, maxLength: 0, tag: tag)
    }

    /// Reads at most `length` available bytes (0 = no cap) into `buffer` at `offset`.
    public func readData(
        withTimeout timeout: TimeInterval,
        buffer: NSMutableData?,
        bufferOffset offset: UInt,
        maxLength length: UInt,
        tag: Int
    ) {
        guard let destination = Self.destination(buffer, offset: offset) else { return }
        queueRead(.available(maxLength: Int(clamping: length)), timeout: timeout, tag: tag, destination: destination)
    }

    /// Reads exactly `length` bytes (ignored when 0).
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
        guard length > 0, let destination = Self.destination(buffer, offset: offset) else { return }
        queueRead(.length(Int(clamping: length)), timeout: timeout, tag: tag, destination: destination)
    }

    /// Reads up to and including `data` (ignored when empty); bytes after it stay buffered.
    public func readData(to data: Data, withTimeout timeout: TimeInterval, tag: Int) {
        readData(to: data, withTimeout: timeout, buffer: nil, bufferOffset: 0, maxLength: 0, tag: tag)
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

    /// Reads up to and including `data`; consuming `length` bytes (0 = no cap) without a match closes the socket
    /// with ``GCDAsyncSocketError/Code/readMaxedOut`` (a match ending exactly at `length` succeeds).
    public func readData(to data: Data, withTimeout timeout: TimeInterval, maxLength length: UInt, tag: Int) {
        readData(to: data, withTimeout: timeout, buffer: nil, bufferOffset: 0, maxLength: length, tag: tag)
    }

    /// Reads up to and including `data` into `buffer` at `offset`, with a maximum length (0 = no cap).
    public func readData(
        to data: Data,
        withTimeout timeout: TimeInterval,
        buffer: NSMutableData?,
        bufferOffset offset: UInt,
        maxLength length: UInt,
        tag: Int
    ) {
        guard !data.isEmpty else { return }
        guard length == 0 || length >= UInt(data.count) else { return }
        guard let destination = Self.destination(buffer, offset: offset) else { return }
        queueRead(
            .separator(Array(data), maxLength: Int(clamping: length)),
            timeout: timeout,
            tag: tag,
            destination: destination
        )
    }

    /// The current read's progress: NaN when no read is current; `done/total` for a length read, 1.0 (total 0)
    /// for others. Out-parameters may be nil.
    public func progressOfRead(
        returningTag tag: UnsafeMutablePointer<Int>?,
        bytesDone done: UnsafeMutablePointer<UInt>?,
        total: UnsafeMutablePointer<UInt>?
    ) -> Float {
        Self.report(readProgress, tag: tag, done: done, total: total)
    }

    /// A snapshot of the current read; nil when none is current.
    public var readProgress: IOProgress? {
        state.withLock { $0.lifecycle.isDisconnected ? nil : $0.progress?.withLock { $0.read } }
    }

    // MARK: writing

    /// Queues a write (ignored when `data` is empty); `socket(_:didWriteDataWithTag:)` follows once every byte
    /// was handed to the kernel.
    public func write(_ data: Data, withTimeout timeout: TimeInterval, tag: Int) {
        guard !data.isEmpty, let adapter = operationAdapter() else { return }
        let time = TimeoutValue.timeout(timeout)
        let bytes = BorrowedData.buffer(data)
        let onLoop = adapter.runOnLoopNow { engine in
            _ = engine.enqueueWrite(bytes, timeout: time, waiter: .delegate(tag: tag))
        }
        guard !onLoop else { return }
        adapter.withEngine { engine in
            _ = engine.enqueueWrite(bytes, timeout: time, waiter: .delegate(tag: tag))
        }
    }

    /// The current write's progress: NaN when none is current, else `done/total`.
    public func progressOfWrite(
        returningTag tag: UnsafeMutablePointer<Int>?,
        bytesDone done: UnsafeMutablePointer<UInt>?,
        total: UnsafeMutablePointer<UInt>?
    ) -> Float {
        Self.report(writeProgress, tag: tag, done: done, total: total)
    }

    /// A snapshot of the current write; nil when none is current.
    public var writeProgress: IOProgress? {
        state.withLock { $0.lifecycle.isDisconnected ? nil : $0.progress?.withLock { $0.write } }
    }

    private static func report(
        _ progress: IOProgress?,
        tag: UnsafeMutablePointer<Int>?,
        done: UnsafeMutablePointer<UInt>?,
        total: UnsafeMutablePointer<UInt>?
    ) -> Float {
        guard let progress else { return .nan }
        tag?.pointee = progress.tag
        done?.pointee = UInt(progress.bytesDone)
        total?.pointee = UInt(progress.total)
        return Float(progress.fractionCompleted)
    }
}

extension ByteBuffer {
    /// One copy of `data` into a new buffer.
    init(data: Data) {
        var buffer = ByteBufferAllocator().buffer(capacity: data.count)
        buffer.writeBytes(data)
        self = buffer
    }
}
