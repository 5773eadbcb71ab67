import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import TetherHTTP

/// `ResponseStreamMachine`: a response as the engine hands it to a load, event by event, without I/O. Each row is a
/// sequence of events from the engine (`head`, `part N`, `finish`, `fail`) and from the load (`awaitHead`, `next`,
/// `cancel`), and what each one answers.
@Suite("ResponseStreamMachine: a response's head, parts and end, event by event, without I/O")
struct ResponseStreamMachineTests {
    struct Row: CustomTestStringConvertible, Sendable {
        var name: String
        var steps: [String]
        var expected: [String]

        var testDescription: String { self.name }
    }

    struct EngineFailure: Error {}

    /// Watermarks of 10 and 4 bytes, so that a few small parts fill the buffer.
    static func run(_ steps: [String]) -> [String] {
        var machine = ResponseStreamMachine(highWatermark: 10, lowWatermark: 4)
        return steps.map { step in
            let words = step.split(separator: " ")
            switch words[0] {
            case "head": return describe(machine.receivedHead(HTTPResponseHead(version: .http1_1, status: .ok)))
            case "part":
                let size = Int(words[1])!
                return describe(machine.receivedBodyPart(ByteBuffer(repeating: 0x61, count: size)))
            case "finish": return describe(machine.finished())
            case "fail": return describe(machine.failed(EngineFailure()))
            case "cancel": return describe(machine.cancel(URLError(.timedOut)))
            case "awaitHead": return describe(machine.awaitHead())
            case "next": return describe(machine.next())
            default: preconditionFailure("unknown step \(step)")
            }
        }
    }

    static func describe(_ action: ResponseStreamMachine.Action) -> String {
        var words: [String] = []
        switch action.wake {
        case .none: break
        case .head(let head): words.append("wake head \(head.status.code)")
        case .part(let part): words.append("wake part \(part.readableBytes)")
        case .end: words.append("wake end")
        case .failure(let error): words.append("wake \(describe(error))")
        }
        switch action.demand {
        case .unchanged: break
        case .withhold: words.append("withhold")
        case .release: words.append("release")
        }
        if action.cancelsEngine { words.append("cancel engine") }
        return words.isEmpty ? "-" : words.joined(separator: ", ")
    }

    static func describe(_ answer: ResponseStreamMachine.Answer) -> String {
        switch answer {
        case .head(let head): "head \(head.status.code)"
        case .part(let part, let demand): "part \(part.readableBytes)" + (demand == .release ? ", release" : "")
        case .end: "end"
        case .failure(let error): describe(error)
        case .wait: "wait"
        }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? URLError { return "failure \(error.code.rawValue)" }
        return error is EngineFailure ? "engine failure" : "failure \(error)"
    }

    static let rows: [Row] = [
        Row(
            name: "a head and parts that arrive before the load asks are buffered, in order",
            steps: ["head", "part 3", "part 2", "finish", "awaitHead", "next", "next", "next"],
            expected: ["-", "-", "-", "-", "head 200", "part 3", "part 2", "end"]
        ),
        Row(
            name: "a load that waits is woken by the head, each part and the end",
            steps: ["awaitHead", "head", "next", "part 3", "next", "finish"],
            expected: ["wait", "wake head 200", "wait", "wake part 3", "wait", "wake end"]
        ),
        Row(
            name: "a cancellation ends the stream after the parts already buffered, and cancels the engine",
            steps: ["head", "part 7", "cancel", "part 5", "finish", "awaitHead", "next", "next"],
            expected: ["-", "-", "cancel engine", "-", "-", "head 200", "part 7", "failure -1001"]
        ),
        Row(
            name: "a cancellation wakes a load that waits for a part",
            steps: ["head", "awaitHead", "next", "cancel", "fail"],
            expected: ["-", "head 200", "wait", "wake failure -1001, cancel engine", "-"]
        ),
        Row(
            name: "a cancellation before the head wakes the load waiting for it",
            steps: ["awaitHead", "cancel", "head"],
            expected: ["wait", "wake failure -1001, cancel engine", "-"]
        ),
        Row(
            name: "the engine's failure comes after the buffered parts",
            steps: ["head", "part 2", "fail", "cancel", "awaitHead", "next", "next"],
            expected: ["-", "-", "-", "-", "head 200", "part 2", "engine failure"]
        ),
        Row(
            name: "a failure before the head is the head's answer",
            steps: ["fail", "awaitHead"],
            expected: ["-", "engine failure"]
        ),
        Row(
            name: "an end without a head is a bad server response",
            steps: ["awaitHead", "finish"],
            expected: ["wait", "wake failure -1011"]
        ),
        Row(
            name: "the engine waits once the buffer reaches the high watermark, until the load takes it to the low",
            steps: ["head", "part 6", "part 4", "part 3", "next", "next", "next"],
            expected: ["-", "-", "withhold", "-", "part 6", "part 4, release", "part 3"]
        ),
        Row(
            name: "an end releases a waiting engine",
            steps: ["head", "part 10", "cancel", "next", "next"],
            expected: ["-", "withhold", "release, cancel engine", "part 10", "failure -1001"]
        ),
        Row(
            name: "a part handed straight to a waiting load is not buffered",
            steps: ["head", "awaitHead", "next", "part 20", "next", "part 1"],
            expected: ["-", "head 200", "wait", "wake part 20", "wait", "wake part 1"]
        ),
    ]

    @Test(arguments: rows)
    func eachEventAnswers(_ row: Row) {
        #expect(Self.run(row.steps) == row.expected)
    }
}
