import NIOCore
import Testing
import TetherCore

/// Invalid configuration constants are programmer errors: they trap (as the codecs' docs say), checked in a child
/// process.
struct ConfigurationPreconditionTests {
    @Test func stxMaxPayloadLengthOver65535Traps() async {
        await #expect(processExitsWith: .failure) {
            _ = STXFrameCodec(maxPayloadLength: 65_536)
        }
        await #expect(processExitsWith: .failure) {
            var codec = STXFrameCodec()
            codec.maxPayloadLength = -1
        }
    }

    @Test func emptyDelimiterTraps() async {
        await #expect(processExitsWith: .failure) {
            _ = DelimiterFrameCodec.Delimiter([])
        }
        await #expect(processExitsWith: .failure) {
            var delimiter = DelimiterFrameCodec.Delimiter.lf
            delimiter.bytes = []
        }
    }

    @Test func negativeMaxFrameLengthTraps() async {
        await #expect(processExitsWith: .failure) {
            _ = LengthFieldFrameCodec(maxFrameLength: -1)
        }
        await #expect(processExitsWith: .failure) {
            _ = DelimiterFrameCodec(maxLength: -1)
        }
    }

    @Test func validBoundaryConstantsDoNotTrap() {
        #expect(STXFrameCodec(maxPayloadLength: 0).maxPayloadLength == 0)
        #expect(STXFrameCodec(maxPayloadLength: 65_535).maxPayloadLength == 65_535)
        #expect(LengthFieldFrameCodec(maxFrameLength: 0).maxFrameLength == 0)
        #expect(DelimiterFrameCodec(maxLength: 0).maxLength == 0)
    }
}
