public import NIOSSL

/// Entry point into the RunLoop face's translation of a `startTLS` dictionary, for the libFuzzer targets in `Fuzz/`
/// (`@_spi(Fuzzing) import TetherSockets`). It calls the code `AsyncSocket.startTLS(_:)` runs, unchanged. Not for
/// applications: this interface may change at any time.
@_spi(Fuzzing)
public enum TLSDictionaryParsing {
    /// What a dictionary translates into.
    public struct Translation: Sendable, Hashable {
        /// The settings the engine applies.
        public var settings: TLSSettings
        /// How a client evaluates the server's chain; nil for a server.
        public var evaluation: Evaluation?
    }

    /// A client's own evaluation of the server's certificates.
    public struct Evaluation: Sendable, Hashable {
        /// The trust roots; nil for the system's.
        public var roots: [NIOSSLCertificate]?
        /// Whether the chain is verified.
        public var verifiesChain: Bool
        /// Whether expired certificates are accepted.
        public var allowsExpired: Bool
        /// The name the leaf must carry; nil for no name check.
        public var peerName: String?
    }

    /// A refused dictionary: a known key with a value of the wrong type, or a level Tether does not offer.
    public struct Refusal: Error, Sendable, Hashable {
        /// The key.
        public var key: String
        /// What is wrong with its value.
        public var problem: String
    }

    /// Translates `dictionary` as `startTLS` does; unknown keys are ignored.
    /// - Throws: ``Refusal``.
    public static func translate(_ dictionary: [String: Any]) throws(Refusal) -> Translation {
        let translated: TLSDictionary
        do {
            translated = try TLSDictionary(dictionary)
        } catch let error as TLSDictionary.BadValue {
            throw Refusal(key: error.key, problem: error.problem)
        } catch {
            throw Refusal(key: "", problem: "unexpected error \(error)")
        }
        return Translation(
            settings: translated.settings,
            evaluation: translated.evaluator.map {
                Evaluation(
                    roots: $0.roots,
                    verifiesChain: $0.verifiesChain,
                    allowsExpired: $0.allowsExpired,
                    peerName: $0.peerName
                )
            }
        )
    }
}
