import Testing

@testable import TetherHTTP

/// The challenge parser reads quoted-strings on Unicode scalars, as the server wrote the header's bytes: a quote or
/// backslash followed by a combining mark (one `Character`) still opens, closes or escapes.
struct HTTPAuthChallengeTests {
    /// U+05BC and U+0301, combining marks.
    static let mark = "\u{05BC}"
    static let acute = "\u{0301}"

    @Test func aQuotedValueStartingWithACombiningMarkIsUnquoted() {
        let header = "Digest realm=\"" + Self.mark + "r\", nonce=\"n" + Self.mark + "\""
        let challenges = HTTPAuthChallenge.parse(header)
        let realm = Self.mark + "r"
        let nonce = "n" + Self.mark
        #expect(challenges.count == 1)
        #expect(challenges.first?.parameters["realm"] == realm)
        #expect(challenges.first?.parameters["nonce"] == nonce)
    }

    @Test func anEscapedQuoteOrBackslashFollowedByACombiningMarkStaysInTheValue() {
        let header = "Basic realm=\"a\\\"" + Self.mark + "b\\\\" + Self.acute + "\", charset=\"UTF-8\""
        let challenges = HTTPAuthChallenge.parse(header)
        let realm = "a\"" + Self.mark + "b\\" + Self.acute
        #expect(challenges.count == 1)
        #expect(challenges.first?.parameters["realm"] == realm)
        #expect(challenges.first?.parameters["charset"] == "UTF-8")
    }
}
