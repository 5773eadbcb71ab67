import Foundation
import NIOCore
import TetherConcurrency

/// The request body as an async sequence of `ByteBuffer`s that the load hands to AsyncHTTPClient with back-pressure.
///
/// Reports upload progress for each chunk once it was handed over (``Iterator/reportHandedOver()``, else at the next
/// call), so the last report carries the whole length.
struct RequestBodySequence: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    enum Source {
        case data(Data)
        case stream(InputStream)
    }

    typealias Progress = @Sendable (_ bytesWritten: Int, _ totalBytesWritten: Int, _ expected: Int) -> Void

    static let chunkSize = 64 << 10

    // Sendable: the stream is read only by the one iterator the engine makes, on one task at a time.
    private let source: UncheckedSendableBox<Source>
    private let expectedLength: Int
    private let progress: Progress

    init(source: Source, expectedLength: Int, progress: @escaping Progress) {
        self.source = UncheckedSendableBox(source)
        self.expectedLength = expectedLength
        self.progress = progress
    }

    func makeAsyncIterator() -> Iterator {
        Iterator(source: self.source.value, expectedLength: self.expectedLength, progress: self.progress)
    }

    struct Iterator: AsyncIteratorProtocol {
        private let source: Source
        private let expectedLength: Int
        private let progress: Progress
        private var offset = 0
        private var lastChunk = 0
        private var isOpened = false
        private var isDone = false

        init(source: Source, expectedLength: Int, progress: @escaping Progress) {
            self.source = source
            self.expectedLength = expectedLength
            self.progress = progress
        }

        /// Whether the chunks returned so far make up the whole expected length (known lengths only): the body ends
        /// with the last of them, without a read that finds the end.
        var hasReachedExpectedLength: Bool {
            self.expectedLength >= 0 && self.offset == self.expectedLength
        }

        /// Ends reading: closes a stream that was opened and not read to its end.
        mutating func close() {
            guard !self.isDone else { return }
            self.isDone = true
            if case .stream(let stream) = self.source, self.isOpened { stream.close() }
        }

        /// Reports the chunk `next()` just returned as handed to the connection now, instead of at the next call:
        /// called before the chunk is written, so that no report comes after the response (a server may answer once
        /// the last byte arrived).
        mutating func reportHandedOver() {
            guard self.lastChunk > 0 else { return }
            self.progress(self.lastChunk, self.offset, self.expectedLength)
            self.lastChunk = 0
        }

        mutating func next() async throws -> ByteBuffer? {
            if self.lastChunk > 0 {
                self.progress(self.lastChunk, self.offset, self.expectedLength)
                self.lastChunk = 0
            }
            if self.isDone { return nil }
            let chunk: ByteBuffer?
            switch self.source {
            case .data(let data):
                if self.offset >= data.count {
                    chunk = nil
                } else {
                    let end = Swift.min(data.count, self.offset + RequestBodySequence.chunkSize)
                    let start = data.startIndex + self.offset
                    chunk = ByteBuffer(bytes: data[start..<(data.startIndex + end)])
                }
            case .stream(let stream):
                if !self.isOpened {
                    self.isOpened = true
                    if stream.streamStatus == .notOpen { stream.open() }
                }
                var buffer = ByteBuffer()
                var failed = false
                let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: RequestBodySequence.chunkSize) {
                    pointer in
                    let base = pointer.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    let read = stream.read(base, maxLength: RequestBodySequence.chunkSize)
                    failed = read < 0
                    return Swift.max(0, read)
                }
                if failed {
                    // `streamError` is unimplemented on Linux: report the failure without it.
                    stream.close()
                    self.isDone = true
                    throw URLError(.requestBodyStreamExhausted)
                }
                if count == 0 {
                    stream.close()
                    chunk = nil
                } else {
                    chunk = buffer
                }
            }
            guard let chunk else {
                self.isDone = true
                return nil
            }
            self.offset += chunk.readableBytes
            self.lastChunk = chunk.readableBytes
            return chunk
        }
    }
}
