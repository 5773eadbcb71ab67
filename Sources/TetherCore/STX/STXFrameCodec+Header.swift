import NIOCore

extension STXFrameCodec {
    /// The number of bytes that follow a frame's header: its payload and its checksum. This is what the seed reads
    /// with its body tag after its header tag, checked before it is believed.
    ///
    /// ```swift
    /// let body = try codec.bodyLength(forHeader: header)  // header: the 7 bytes read with the header tag
    /// sock.readData(toLength: UInt(body), withTimeout: 5, tag: STXReadTag.body)
    /// ```
    ///
    /// - Parameter header: The first ``headerLength`` bytes of a frame (a `Data`, an array, a buffer's bytes view).
    /// - Returns: The payload length the header announces plus ``FrameChecksum/byteCount``.
    /// - Throws: ``FramingError`` with the header attached:
    ///   ``FramingError/Code-swift.struct/invalidLength`` when `header` is not ``headerLength`` bytes long,
    ///   ``FramingError/Code-swift.struct/badStartByte`` when it does not start with ``startByte`` (the stream is out
    ///   of step and the length means nothing), ``FramingError/Code-swift.struct/frameTooLarge`` when it announces
    ///   more than ``maxPayloadLength``.
    public func bodyLength<Header: Collection>(forHeader header: Header) throws -> Int where Header.Element == UInt8 {
        let bytes = Array(header)
        guard bytes.count == Self.headerLength else {
            throw FramingError(
                code: .invalidLength,
                message: "a header is \(Self.headerLength) bytes, got \(bytes.count)",
                bytes: ByteBuffer(bytes: bytes)
            )
        }
        guard bytes[0] == self.startByte else {
            throw FramingError(
                code: .badStartByte,
                message: "header starts with \(bytes[0].hexLiteral), expected \(self.startByte.hexLiteral)",
                bytes: ByteBuffer(bytes: bytes)
            )
        }
        let (low, high) = (Int(bytes[5]), Int(bytes[6]))
        let length = self.endianness == .little ? low | high << 8 : high | low << 8
        guard length <= self.maxPayloadLength else {
            throw FramingError(
                code: .frameTooLarge,
                message: "header announces \(length) payload bytes, maxPayloadLength is \(self.maxPayloadLength)",
                bytes: ByteBuffer(bytes: bytes)
            )
        }
        return length + self.checksum.byteCount
    }
}
