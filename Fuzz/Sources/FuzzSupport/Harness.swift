import CLibFuzzer
public import NIOCore
public import TetherCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Stops the fuzzer with a crash report when an invariant it checks does not hold.
public func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        fatalError("invariant violated: \(message())")
    }
}

/// `text` as the inside of an RFC 9110 quoted-string: every `"` and `\` escaped, on Unicode scalars (a quote followed
/// by a combining mark is one `Character` but still a quote on the wire).
public func quotedStringContents(_ text: String) -> String {
    var result = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
        if scalar == "\"" || scalar == "\\" {
            result.append("\\")
        }
        result.append(scalar)
    }
    return String(result)
}

/// Reads configuration bytes off the front of a fuzzer input; the rest is the byte stream.
public struct FuzzInput {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    public init(_ start: UnsafeRawPointer?, _ count: Int) {
        self.bytes = UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : count)
    }

    public mutating func byte() -> UInt8 {
        guard self.offset < self.bytes.count else {
            return 0
        }
        defer { self.offset += 1 }
        return self.bytes[self.offset]
    }

    public mutating func uint16() -> UInt16 {
        UInt16(self.byte()) << 8 | UInt16(self.byte())
    }

    /// Whether every byte has been read.
    public var isAtEnd: Bool { self.offset >= self.bytes.count }

    /// A length byte (0–15), then that many bytes (fewer at the end) decoded as UTF-8.
    public mutating func string() -> String {
        let count = Int(self.byte() % 16)
        let available = min(count, self.bytes.count - self.offset)
        return String(decoding: (0..<available).map { _ in self.byte() }, as: UTF8.self)
    }

    /// Everything not yet read.
    public var rest: [UInt8] {
        self.offset < self.bytes.count ? Array(self.bytes[self.offset...]) : []
    }
}

/// SplitMix64, for chunk sizes derived from the input.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { self.state = seed }
    public mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// What decoding a whole stream produced.
public struct Outcome<Frame: Equatable>: Equatable {
    public var frames: [Frame] = []
    public var errorCode: Int?
    /// The stream bytes still buffered at the end (after an error, the rest of the stream too).
    public var leftover: [UInt8] = []
    public var discarded = 0
}

/// Feeds `stream` to a copy of `codec` in chunks of `chunkSizes` (then the rest), like `ByteToMessageHandler`,
/// checking on every call that `.needMoreData` moves the reader index only by discarded bytes and that a throw
/// leaves the buffer untouched and carries a `FramingError`.
public func drive<Codec: FrameCodec>(
    _ codec: Codec,
    _ stream: [UInt8],
    chunkSizes: [Int],
    compaction: Bool = false,
    discarded: (Codec) -> Int
) -> Outcome<Codec.Frame> where Codec.Frame: Equatable {
    var codec = codec
    var outcome = Outcome<Codec.Frame>()
    var buffer = ByteBufferAllocator().buffer(capacity: 0)
    var position = 0
    var sizes = chunkSizes.makeIterator()

    func step(last: Bool) -> Bool {
        let readerIndex = buffer.readerIndex
        let readable = buffer.readableBytes
        let discardedBefore = discarded(codec)
        do {
            let result = last ? try codec.decodeLast(from: &buffer) : try codec.decode(from: &buffer)
            let skipped = discarded(codec) - discardedBefore
            require(skipped >= 0 && buffer.readerIndex >= readerIndex + skipped, "reader index moved backwards")
            switch result {
            case .frame(let frame):
                require(buffer.readerIndex > readerIndex, "a frame consumed no bytes")
                outcome.frames.append(frame)
                return true
            case .needMoreData:
                require(buffer.readerIndex == readerIndex + skipped, "needMoreData consumed bytes it did not discard")
                if last {
                    require(buffer.readableBytes == 0, "decodeLast left bytes without throwing")
                }
                return false
            }
        } catch let error as FramingError {
            require(buffer.readerIndex == readerIndex, "throw moved the reader index")
            require(buffer.readableBytes == readable, "throw changed the readable bytes")
            require(discarded(codec) == discardedBefore, "throw discarded bytes")
            if error.code == .truncatedFrame {
                require(
                    error.bytes?.readableBytes == buffer.readableBytes,
                    "truncatedFrame without the left-over bytes"
                )
            }
            outcome.errorCode = error.code.rawValue
            return false
        } catch {
            require(false, "unexpected error type \(error)")
            return false
        }
    }

    var chunkIndex = 0
    while position < stream.count {
        let size = min(stream.count - position, max(1, sizes.next() ?? stream.count))
        // Now and then discard the read bytes as NIO does, moving the reader index under the codec.
        if compaction && chunkIndex % 8 == 7 {
            buffer.discardReadBytes()
        }
        chunkIndex += 1
        buffer.writeBytes(stream[position..<(position + size)])
        position += size
        if outcome.errorCode == nil {
            while step(last: false) {}
        }
    }
    if outcome.errorCode == nil {
        while step(last: true) {}
    }
    outcome.leftover = Array(buffer.readableBytesView)
    outcome.discarded = discarded(codec)
    return outcome
}

/// Decodes `stream` all at once, byte by byte (short streams) and in chunks drawn from `seed`, requires the same
/// outcome from each, and returns it.
public func outcomeInEveryChunking<Codec: FrameCodec>(
    _ codec: Codec,
    _ stream: [UInt8],
    seed: UInt8,
    discarded: (Codec) -> Int = { _ in 0 }
) -> Outcome<Codec.Frame> where Codec.Frame: Equatable {
    let whole = drive(codec, stream, chunkSizes: [], discarded: discarded)
    var rng = SplitMix64(seed: UInt64(seed) &* 0x1234_5678_9ABC_DEF1 &+ UInt64(stream.count))
    let random = (0..<stream.count).map { _ in Int.random(in: 1...17, using: &rng) }
    let chunked = drive(codec, stream, chunkSizes: random, compaction: true, discarded: discarded)
    require(chunked == whole, "random chunks differ")
    if stream.count <= 256 {
        let bytewise = [Int](repeating: 1, count: stream.count)
        require(drive(codec, stream, chunkSizes: bytewise, discarded: discarded) == whole, "byte by byte differs")
    }
    return whole
}

extension ByteBuffer {
    public var bytes: [UInt8] { Array(self.readableBytesView) }
}

/// Hands the process to libFuzzer with `testOneInput` as the target (the fuzzer's flags come from the command line).
///
/// SwiftPM gives every executable its own `main`, so libFuzzer's is not used; `LLVMFuzzerRunDriver` is its
/// documented entry point for that case.
public func runFuzzer(_ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
}
