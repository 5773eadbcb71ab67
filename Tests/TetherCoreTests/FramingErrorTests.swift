import NIOCore
import Testing
import TetherCore

struct FramingErrorTests {
    @Test(arguments: [
        (FramingError.Code.badStartByte, 1, "badStartByte"),
        (.checksumMismatch, 2, "checksumMismatch"),
        (.frameTooLarge, 3, "frameTooLarge"),
        (.invalidLength, 4, "invalidLength"),
        (.truncatedFrame, 5, "truncatedFrame"),
        (.delimiterInPayload, 6, "delimiterInPayload"),
    ])
    func codesHaveTheirRawValuesAndNames(code: FramingError.Code, rawValue: Int, name: String) {
        #expect(code.rawValue == rawValue)
        #expect(code.description == name)
        #expect(FramingError.Code(rawValue: rawValue) == code)
    }

    @Test func unknownCodeKeepsItsNumber() {
        #expect(FramingError.Code(rawValue: 99).description == "code(99)")
    }

    @Test func catchMatchesByCode() {
        var codec = STXFrameCodec()
        var buffer = ByteBuffer(bytes: [0x02, 0x01, 0x00, 0x02, 0x00, 0x02, 0x00, 0x68, 0x69, 0x00])
        var matched = false
        do {
            _ = try codec.decode(from: &buffer)
        } catch FramingError.Code.badStartByte {
            Issue.record("matched the wrong code")
        } catch FramingError.Code.checksumMismatch {
            matched = true
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(matched)
        #expect(!(FramingError.Code.checksumMismatch ~= CancellationError()))
    }

    @Test func descriptionNamesCodeMessageAndAttachedBytes() {
        let error = FramingError(
            code: .checksumMismatch,
            message: "checksum 0x1F, expected 0xDA",
            bytes: ByteBuffer(bytes: [1, 2, 3])
        )
        #expect(error.description == "FramingError.checksumMismatch: checksum 0x1F, expected 0xDA [3 bytes attached]")
        let bare = FramingError(code: .frameTooLarge, message: "too big")
        #expect(bare.description == "FramingError.frameTooLarge: too big")
        #expect(bare.bytes == nil)
        #expect(bare == FramingError(code: .frameTooLarge, message: "too big"))
    }
}
