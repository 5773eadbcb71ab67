import NIOCore
import TetherCore

/// The frames the TCP scenarios exchange: an STX frame (`0x02 | dest | src | length | data | CRC`) whose 32-byte
/// payload is the connection's number, the frame's sequence number, the send time (monotonic nanoseconds) and 12
/// filler bytes derived from the sequence, so that a frame of another connection or a changed byte is seen.
enum StressFrame {
    static let payloadLength = 32
    static let codec = STXFrameCodec()

    /// What a checked echo carries.
    struct Echo {
        var sequence: UInt64
        var sentAt: UInt64
    }

    static func make(connection: UInt32, sequence: UInt64, sentAt: UInt64) -> STXFrame {
        var payload = ByteBuffer()
        payload.reserveCapacity(payloadLength)
        payload.writeInteger(connection)
        payload.writeInteger(sequence)
        payload.writeInteger(sentAt)
        for index in 0..<12 { payload.writeInteger(UInt8(truncatingIfNeeded: sequence &+ UInt64(index))) }
        return STXFrame(destination: UInt16(truncatingIfNeeded: connection), source: 1, payload: payload)
    }

    /// The encoded bytes of `make(…)`.
    static func encoded(connection: UInt32, sequence: UInt64, sentAt: UInt64) -> ByteBuffer {
        var buffer = ByteBuffer()
        try! codec.encode(make(connection: connection, sequence: sequence, sentAt: sentAt), into: &buffer)
        return buffer
    }

    /// The echo's sequence and send time, or nil when the frame is not one of `connection`'s intact frames.
    static func check(_ frame: STXFrame, connection: UInt32) -> Echo? {
        var payload = frame.payload
        guard payload.readableBytes == payloadLength,
            frame.destination == UInt16(truncatingIfNeeded: connection),
            payload.readInteger(as: UInt32.self) == connection,
            let sequence = payload.readInteger(as: UInt64.self),
            let sentAt = payload.readInteger(as: UInt64.self)
        else { return nil }
        for index in 0..<12 {
            let expected = UInt8(truncatingIfNeeded: sequence &+ UInt64(index))
            if payload.readInteger(as: UInt8.self) != expected { return nil }
        }
        return Echo(sequence: sequence, sentAt: sentAt)
    }
}
