import NIOCore
import TetherConcurrency
import TetherSockets

extension AsyncSimRunner {
    /// Ends the life as the schedule says (every ending but `release`, which the caller does by dropping the
    /// connection). `sent`: the stream's length so far, all of it read. Returns whether the peer must have
    /// received every write.
    func end(_ connection: TCPConnection, sent: Int) async throws -> Bool {
        let extra = Int(schedule.seed % 7)
        switch schedule.ending {
        case .close(let size):
            await write(size: size, expected: "written", on: connection)
            await close(connection, expectingSuccess: true)
            await expectEnded(connection)
            // Idempotent.
            await close(connection, expectingSuccess: true)
            try await peer.receiverEnded()
            expectPeerEnd(.endOfStream)
            return true
        case .halfClose(let tail):
            operations.withLock { $0 += 2 }
            try await connection.halfClose()
            // The end of the stream reaches the peer after every accepted byte.
            try await peer.receiverEnded()
            expectPeerEnd(.endOfStream)
            do {
                try await connection.write(ByteBuffer(bytes: [1]))
                model.withLock { $0.violation("a write after halfClose() returned") }
            } catch {}
            let finishing = Task { try await peer.finish(from: sent, tail: tail, reset: false) }
            await drain(connection, until: "nil")
            try await finishing.value
            expectOffset(sent + tail)
            await expect(.length(1 + extra), timeout: .seconds(5), "closed", on: connection)
            await expect(.available(maxLength: 10), timeout: .seconds(5), "nil", on: connection)
            await close(connection, expectingSuccess: true)
            return true
        case .peerHalfClose(let tail):
            let finishing = Task { try await peer.finish(from: sent, tail: tail, reset: false) }
            // A read for more than is left meets the end of the stream and takes nothing.
            await expect(.length(tail + 1 + extra), timeout: .seconds(20), "closed", on: connection)
            try await finishing.value
            await drain(connection, until: "nil")
            expectOffset(sent + tail)
            await expect(
                .separator(schedule.stream.separator, maxLength: 65_536),
                timeout: nil,
                "closed",
                on: connection
            )
            await expect(.length(1), timeout: .zero, "closed", on: connection)
            await expect(.available(maxLength: 1), timeout: nil, "nil", on: connection)
            // Writing goes on.
            await write(size: WriteRecord.headerSize + extra * 1_000, expected: "written", on: connection)
            await close(connection, expectingSuccess: true)
            try await peer.receiverEnded()
            return true
        case .peerReset(let tail):
            let finishing = Task { try await peer.finish(from: sent, tail: tail, reset: true) }
            await drain(connection, until: "any")
            try await finishing.value
            operations.withLock { $0 += 2 }
            let outcome = await Self.perform(.length(1), timeout: .seconds(5), on: connection)
            switch outcome {
            case .failed(let failure) where failure != .timeout: break
            default: model.withLock { $0.violation("a read after the peer's reset answered \(outcome)") }
            }
            // The error that ended the connection may be what later operations throw (`.closed` or the reset).
            try? await connection.close()
            return false
        case .release:
            return false
        }
    }

    private func close(_ connection: TCPConnection, expectingSuccess: Bool) async {
        operations.withLock { $0 += 1 }
        do {
            try await connection.close()
        } catch {
            model.withLock { $0.violation("close() threw \(error)") }
        }
    }

    /// After the connection ended: reads and writes throw `.closed`.
    private func expectEnded(_ connection: TCPConnection) async {
        operations.withLock { $0 += 1 }
        await expect(.length(1), timeout: .seconds(5), "closed", on: connection)
        await expect(.available(maxLength: 5), timeout: nil, "closed", on: connection)
        do {
            try await connection.write(ByteBuffer(bytes: [1]), timeout: .seconds(5))
            model.withLock { $0.violation("a write after the end returned") }
        } catch {
            let outcome = AsyncSimOutcome(error: error)
            if case .failed(.closed) = outcome {
            } else {
                model.withLock { $0.violation("a write after the end threw \(error)") }
            }
        }
    }

    private func expectPeerEnd(_ end: AsyncSimPeerRecord.End) {
        let seen = peer.record.withLock { $0.end }
        if seen != end {
            model.withLock { $0.violation("the peer saw the end \(String(describing: seen)), not \(end)") }
        }
    }

    private func expectOffset(_ offset: Int) {
        model.withLock { model in
            if model.offset != offset { model.violation("the reads took \(model.offset) bytes of \(offset)") }
        }
    }
}
