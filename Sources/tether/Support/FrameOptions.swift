import ArgumentParser
import NIOCore
import TetherCore

/// `--frame stx|length|line`, `--delimiter`, `--dest`, `--src`: how `nc` and `serve` frame their bytes.
struct FrameOptions: ParsableArguments {
    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case stx
        case length
        case line
    }

    enum DelimiterName: String, ExpressibleByArgument, CaseIterable {
        case crlf
        case lf
        case cr
        case nul

        var delimiter: DelimiterFrameCodec.Delimiter {
            switch self {
            case .crlf: .crlf
            case .lf: .lf
            case .cr: .cr
            case .nul: .nul
            }
        }
    }

    @Option(help: "Frame the stream: stx (the seed's frames), length (4-byte big-endian length), line.")
    var frame: Kind?

    @Option(help: "The line delimiter with --frame line.")
    var delimiter: DelimiterName = .lf

    @Option(help: "The destination of sent STX frames.")
    var dest: UInt16 = 0

    @Option(help: "The source of sent STX frames.")
    var src: UInt16 = 0

    /// The STX codec of the CLI: resynchronises on garbage and counts what it skipped.
    var stxCodec: STXFrameCodec { STXFrameCodec(resynchronization: .skipToNextStartByte) }
    var lineCodec: DelimiterFrameCodec { DelimiterFrameCodec(delimiter: delimiter.delimiter, maxLength: 1 << 20) }
    var lengthCodec: LengthFieldFrameCodec { LengthFieldFrameCodec() }
}

extension STXFrame {
    /// `dest=1 src=2 len=2 6869`, as `tether nc --frame stx` prints a frame.
    var cliDescription: String {
        let hex = payload.readableBytesView.map { byte in
            let digits = String(byte, radix: 16)
            return byte < 16 ? "0" + digits : digits
        }.joined()
        return "dest=\(destination) src=\(source) len=\(payload.readableBytes) \(hex)"
    }
}
