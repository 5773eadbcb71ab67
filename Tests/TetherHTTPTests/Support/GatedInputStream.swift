import Foundation

/// A request body stream that hands out its bytes at once, then finds its end only once ``open()`` is called on its
/// gate (or a hang guard passes): for a body whose end comes after the response to it.
final class GatedInputStream: InputStream {
    private let bytes: [UInt8]
    private var offset = 0
    private var status = Stream.Status.notOpen
    private let gate = DispatchSemaphore(value: 0)

    init(bytes: [UInt8]) {
        self.bytes = bytes
        super.init(data: Data())
    }

    /// Lets the read that finds the end return.
    func openGate() {
        self.gate.signal()
    }

    override var streamStatus: Stream.Status { self.status }
    override var hasBytesAvailable: Bool { true }
    override func open() { self.status = .open }
    override func close() { self.status = .closed }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        guard self.offset >= self.bytes.count else {
            let count = min(len, self.bytes.count - self.offset)
            for index in 0..<count { buffer[index] = self.bytes[self.offset + index] }
            self.offset += count
            return count
        }
        // A guard against a hang, not a timing: the test opens the gate.
        _ = self.gate.wait(timeout: .now() + 10)
        return 0
    }
}
