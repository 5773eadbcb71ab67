import NIOCore

/// The seed's STX frame (STX, destination, source, little-endian length, payload, CRC-8) decoded by hand as a NIO
/// user would: a slice of the payload per frame, the CRC checked.
struct HandWrittenSTXDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer

    struct Malformed: Error {}

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let payload = try Self.next(from: &buffer) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(payload))
        return .continue
    }

    static func next(from buffer: inout ByteBuffer) throws -> ByteBuffer? {
        guard buffer.readableBytes >= 7 else { return nil }
        let start = buffer.readerIndex
        guard buffer.getInteger(at: start, as: UInt8.self) == 0x02,
            let length = buffer.getInteger(at: start + 5, endianness: .little, as: UInt16.self).map(Int.init)
        else { throw Malformed() }
        guard buffer.readableBytes >= 7 + length + 1 else { return nil }
        var crc: UInt8 = 0
        for byte in buffer.readableBytesView.prefix(7 + length) {
            crc ^= byte
            for _ in 0..<8 { crc = crc & 0x80 != 0 ? (crc << 1) ^ 0x07 : crc << 1 }
        }
        guard buffer.getInteger(at: start + 7 + length, as: UInt8.self) == crc else { throw Malformed() }
        buffer.moveReaderIndex(forwardBy: 7)
        let payload = buffer.readSlice(length: length)
        buffer.moveReaderIndex(forwardBy: 1)
        return payload
    }
}
