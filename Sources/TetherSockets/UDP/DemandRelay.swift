import NIOCore
import TetherConcurrency

/// The sequence's back-pressure delegate: asks the engine for more on its loop.
final class DemandRelay: NIOAsyncSequenceProducerDelegate, Sendable {
    private let target = LockedBox<(UncheckedSendableBox<UDPEngine>, any EventLoop)?>(nil)
    private let ownerBox = LockedBox<UncheckedSendableBox<AsyncFaceUDPOwner>?>(nil)

    func attach(engine: UDPEngine, owner: AsyncFaceUDPOwner, loop: any EventLoop) {
        // Sendable: the engine and its owner are used on `loop` only (the relay hops there).
        target.withLock { $0 = (UncheckedSendableBox(engine), loop) }
        ownerBox.withLock { $0 = UncheckedSendableBox(owner) }
    }

    func produceMore() {
        guard let target = target.withLock({ $0 }) else { return }
        let engine = target.0
        target.1.execute { engine.value.wantsReads = true }
    }

    func didTerminate() {
        guard let target = target.withLock({ $0 }) else { return }
        let engine = target.0
        target.1.execute { engine.value.wantsReads = false }
    }
}
