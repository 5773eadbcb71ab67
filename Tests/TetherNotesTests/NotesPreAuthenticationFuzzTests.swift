import Foundation
import NIOCore
import Testing
import TetherCore

@testable import TetherNotes

/// Random first frames against a session that must authenticate: whatever the bytes, the session either checks
/// credentials that round-trip on the wire, or refuses and closes; it never serves a request before a login.
@Suite("The pre-authentication phase under random first frames (seeded)")
struct NotesPreAuthenticationFuzzTests {
    /// SplitMix64: a seeded generator, so that a failure can be replayed with its seed.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// A payload that is often close to an `authenticate`: its kind, a method, lengths near the limits.
    static func payload(_ random: inout SplitMix) -> [UInt8] {
        var bytes: [UInt8] = []
        let kind: UInt8 = Bool.random(using: &random) ? 0x06 : UInt8.random(in: 0...0xFF, using: &random)
        bytes.append(kind)
        // The request id: whole, or (sometimes) cut short.
        let idLength = Int.random(in: 0..<8, using: &random) == 0 ? Int.random(in: 0...3, using: &random) : 4
        for _ in 0..<idLength { bytes.append(UInt8.random(in: 0...0xFF, using: &random)) }
        if Bool.random(using: &random) {
            bytes.append([1, 2, 0, 3].randomElement(using: &random)!)
            let userLength = [0, 1, 5, 64, 65, 200, 255].randomElement(using: &random)!
            bytes.append(UInt8(userLength))
            let available = Int.random(in: 0...(userLength + 1_100), using: &random)
            for _ in 0..<available { bytes.append(UInt8.random(in: 0x20...0x7E, using: &random)) }
            // Sometimes a byte that is not UTF-8.
            if available > 0 && Int.random(in: 0..<4, using: &random) == 0 {
                bytes[Int.random(in: 7..<bytes.count, using: &random)] = UInt8.random(in: 0x80...0xFF, using: &random)
            }
        }
        return bytes
    }

    @Test func everyFirstFrameIsEitherACredentialCheckOrARefusalThatCloses() throws {
        let seed = ProcessInfo.processInfo.environment["TETHER_SEED"].flatMap(UInt64.init) ?? 0x7E7E_5EED
        var random = SplitMix(state: seed)
        var checked = 0
        for round in 0..<5_000 {
            let bytes = Self.payload(&random)
            var session = NotesServerSession(requiresAuthentication: true)
            let actions = session.received(STXFrame(destination: 1, source: 9, bytes: bytes))
            #expect(!session.isServing, "seed \(seed) round \(round)")
            switch actions.first {
            case .authenticate(let requestID, let credentials):
                checked += 1
                #expect(actions.count == 1 && session.isOpen, "seed \(seed) round \(round)")
                let again = try NotesWireFormat.decode(NotesWireFormat.encode(.authenticate(credentials), requestID: 1))
                #expect(again.message == .authenticate(credentials), "seed \(seed) round \(round)")
                #expect(requestID == ByteBuffer(bytes: bytes).getInteger(at: 1, endianness: .little, as: UInt32.self))
            case .send(let frame):
                #expect(actions.last == .close && !session.isOpen, "seed \(seed) round \(round)")
                guard case .failed(let error) = try NotesWireFormat.decode(frame.payload).message else {
                    Issue.record("seed \(seed) round \(round): a reply that is not a refusal")
                    continue
                }
                #expect(error.code == .notAuthenticated, "seed \(seed) round \(round)")
            default:
                Issue.record("seed \(seed) round \(round): \(actions)")
            }
        }
        // The generator reaches both answers (about 3 % of its frames are well-formed logins).
        #expect(checked > 50 && checked < 4_950, "seed \(seed): \(checked) credential checks")
    }
}
