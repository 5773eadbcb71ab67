import Foundation
import NIOCore
import NIOPosix
import Testing
import TetherConcurrency

@testable import TetherSockets

/// Every TCP channel the engine makes reads with ``ReceiveSizing``'s allocator (reads that grow to 256 KiB, not NIO's
/// 64 KiB), whichever way the connection came to be; and the delegate's `Data` pins a receive buffer only when it
/// fills a fair part of it.
@Suite(.timeLimit(.minutes(1)))
struct ReceiveSizingTests {
    private static func expectEngineSizing(
        _ channel: (any Channel)?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let channel = try #require(channel, sourceLocation: sourceLocation)
        let option = try await channel.getOption(.recvAllocator).get()
        let allocator = try #require(option as? AdaptiveRecvByteBufferAllocator, sourceLocation: sourceLocation)
        #expect(allocator.maximum == ReceiveSizing.maximumRead, sourceLocation: sourceLocation)
        #expect(allocator.initial == 2_048, sourceLocation: sourceLocation)
        // The other engine option set in the same place (`engineChannelOptions()`).
        #expect(try await channel.getOption(.allowRemoteHalfClosure).get(), sourceLocation: sourceLocation)
    }

    @Test func aDelegateFaceClientAndTheSocketItWasAcceptedOnReadWithTheEngineSizing() async throws {
        let pair = try await makeSocketPair()
        defer { pair.close() }
        try await Self.expectEngineSizing(pair.client.state.withLock { $0.channel })
        try await Self.expectEngineSizing(pair.server.state.withLock { $0.channel })
    }

    @Test func anAdoptedDescriptorReadsWithTheEngineSizing() async throws {
        let adopted = try await adoptConnectedDescriptor()
        defer { adopted.close() }
        let (socket, recorder, accepted) = (adopted.socket, adopted.recorder, adopted.peer)
        // The channel is made on the event loop; a read that completes shows it is in place.
        socket.readData(toLength: 1, withTimeout: 5, tag: 1)
        accepted.send("a")
        try await recorder.wait { $0.contains(.read(Data("a"), tag: 1)) }
        try await Self.expectEngineSizing(socket.state.withLock { $0.channel })
    }

    @Test func anAsyncFaceConnectionAndTheOneItsListenerAcceptedReadWithTheEngineSizing() async throws {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        async let accepted = {
            var iterator = listener.connections.makeAsyncIterator()
            return try await iterator.next()
        }()
        let client = try await TCPConnection.connect(host: "127.0.0.1", port: listener.localPort)
        let server = try #require(try await accepted)
        try await Self.expectEngineSizing(client.channel)
        try await Self.expectEngineSizing(server.channel)
        try await client.close()
        try await server.close()
        try await listener.close()
    }

    /// The delivered bytes of a read of `count` bytes at the start of a receive buffer of `capacity` bytes, and
    /// whether they share the buffer's storage.
    private func deliver(_ count: Int, capacity: Int) -> (data: Data, sharesStorage: Bool) {
        var receive = ByteBufferAllocator().buffer(capacity: capacity)
        receive.writeRepeatingByte(0x33, count: count)
        let slice = receive.readSlice(length: count)!
        let data = slice.deliveredData
        let shared = slice.withUnsafeReadableBytes { buffer in
            data.withUnsafeBytes { $0.baseAddress == buffer.baseAddress }
        }
        return (data, shared)
    }

    @Test func aLargeReadThatFillsLessThanAQuarterOfItsBufferIsCopied() {
        let capacity = ReceiveSizing.maximumRead
        let sparse = self.deliver(capacity / 4 - 1, capacity: capacity)
        #expect(!sparse.sharesStorage)
        #expect(sparse.data == Data(repeating: 0x33, count: capacity / 4 - 1))
        let quarter = self.deliver(capacity / 4, capacity: capacity)
        #expect(quarter.sharesStorage)
        #expect(quarter.data == Data(repeating: 0x33, count: capacity / 4))
    }
}
