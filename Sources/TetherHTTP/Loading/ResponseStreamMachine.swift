import Foundation
import NIOCore
import NIOHTTP1

/// The response of one request as the engine hands it to a load, without I/O: the head, the body parts buffered
/// until the load takes them, and how the stream ends.
///
/// The engine's events (``receivedHead(_:)``, ``receivedBodyPart(_:)``, ``finished()``, ``failed(_:)``) and the
/// load's (``awaitHead()``, ``next()``, ``cancel(_:)``) come in under one lock; each returns what to do: which value
/// wakes the load if it waits, and whether the engine must wait before it reads on (back-pressure) or may go on.
///
/// An end, a failure or a cancellation comes after the parts already buffered: a load that takes its parts late
/// (its task ran after an idle timeout) still gets every byte that had arrived, then the end or the error.
struct ResponseStreamMachine {
    /// What wakes a load that waits for the head or for the next part.
    enum Wake {
        case none
        case head(HTTPResponseHead)
        case part(ByteBuffer)
        case end
        case failure(any Error)
    }

    /// What the engine does after a body part.
    enum Demand: Equatable {
        /// Nothing changes: the engine reads on (or keeps waiting).
        case unchanged
        /// The buffer is full: the engine waits until ``release``.
        case withhold
        /// The engine waited and may read on.
        case release
    }

    /// What to do after an event.
    struct Action {
        var wake: Wake = .none
        var demand: Demand = .unchanged
        /// Cancel the engine's request (the load cancelled while the engine still works on it).
        var cancelsEngine = false
    }

    /// What the load gets when it asks for the head or the next part: a value now, or ``wait`` for a ``Wake``.
    enum Answer {
        case head(HTTPResponseHead)
        case part(ByteBuffer, demand: Demand)
        case end
        case failure(any Error)
        case wait
    }

    /// The engine ended a response without its head (not expected of it).
    static var endedWithoutHead: URLError { URLError(.badServerResponse) }

    private enum Terminal {
        case end
        case failure(any Error)
    }

    private enum Awaiting {
        case head
        case part
    }

    /// The most bytes buffered before the engine waits, and the level to which the load must take them down before
    /// the engine reads on.
    let highWatermark: Int
    let lowWatermark: Int

    private(set) var head: HTTPResponseHead?
    private var parts = CircularBuffer<ByteBuffer>()
    /// The bytes in ``parts``.
    private(set) var bufferedBytes = 0
    /// How the stream ends, after ``parts``; nil while the engine still works.
    private var terminal: Terminal?
    private var awaiting: Awaiting?
    private var isDemandWithheld = false

    init(highWatermark: Int = 512 << 10, lowWatermark: Int = 128 << 10) {
        precondition(lowWatermark < highWatermark)
        self.highWatermark = highWatermark
        self.lowWatermark = lowWatermark
    }

    /// Whether the stream ended (its end, failure or cancellation is recorded), whatever is still buffered.
    var hasEnded: Bool { self.terminal != nil }

    // MARK: - The engine's events

    mutating func receivedHead(_ head: HTTPResponseHead) -> Action {
        guard self.terminal == nil, self.head == nil else { return Action() }
        self.head = head
        guard self.awaiting == .head else { return Action() }
        self.awaiting = nil
        return Action(wake: .head(head))
    }

    mutating func receivedBodyPart(_ part: ByteBuffer) -> Action {
        guard self.terminal == nil else { return Action() }
        if self.awaiting == .part {
            self.awaiting = nil
            return Action(wake: .part(part))
        }
        self.parts.append(part)
        self.bufferedBytes += part.readableBytes
        guard self.bufferedBytes >= self.highWatermark, !self.isDemandWithheld else { return Action() }
        self.isDemandWithheld = true
        return Action(demand: .withhold)
    }

    mutating func finished() -> Action {
        self.end(with: .end, cancelsEngine: false)
    }

    mutating func failed(_ error: any Error) -> Action {
        self.end(with: .failure(error), cancelsEngine: false)
    }

    /// The load stops the stream (an idle timeout, a cancellation): it ends with `error` after the parts already
    /// buffered, and the engine's request is cancelled.
    mutating func cancel(_ error: any Error) -> Action {
        self.end(with: .failure(error), cancelsEngine: true)
    }

    private mutating func end(with terminal: Terminal, cancelsEngine: Bool) -> Action {
        guard self.terminal == nil else { return Action() }
        self.terminal = terminal
        var action = Action(cancelsEngine: cancelsEngine)
        if self.isDemandWithheld {
            // Nobody reads on after the end, but a waiting engine must not be left waiting.
            self.isDemandWithheld = false
            action.demand = .release
        }
        switch self.awaiting {
        case .head:
            self.awaiting = nil
            switch terminal {
            case .end: action.wake = .failure(Self.endedWithoutHead)
            case .failure(let error): action.wake = .failure(error)
            }
        case .part:
            // Waiting for a part means the buffer is empty: the end is next.
            self.awaiting = nil
            switch terminal {
            case .end: action.wake = .end
            case .failure(let error): action.wake = .failure(error)
            }
        case nil:
            break
        }
        return action
    }

    // MARK: - The load's requests

    /// The head if it arrived (also after a later failure or cancellation), the failure that came instead, or wait.
    mutating func awaitHead() -> Answer {
        precondition(self.awaiting == nil, "one request at a time")
        if let head = self.head { return .head(head) }
        switch self.terminal {
        case .failure(let error): return .failure(error)
        case .end: return .failure(Self.endedWithoutHead)
        case nil:
            self.awaiting = .head
            return .wait
        }
    }

    /// The next buffered part, then the end or the failure, or wait.
    mutating func next() -> Answer {
        precondition(self.awaiting == nil, "one request at a time")
        if let part = self.parts.popFirst() {
            self.bufferedBytes -= part.readableBytes
            var demand = Demand.unchanged
            if self.isDemandWithheld, self.bufferedBytes <= self.lowWatermark {
                self.isDemandWithheld = false
                demand = .release
            }
            return .part(part, demand: demand)
        }
        switch self.terminal {
        case .end: return .end
        case .failure(let error): return .failure(error)
        case nil:
            self.awaiting = .part
            return .wait
        }
    }
}
