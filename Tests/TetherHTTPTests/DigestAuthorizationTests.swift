import Testing

@testable import TetherHTTP

/// Found by `FuzzCacheControl` (its writer had the same flaw): quoted values were escaped with
/// `replacingOccurrences`, which works on `Character`s, so a quote or backslash followed by a combining mark (one
/// `Character`) was left unescaped and ended the value early on the wire.
struct DigestAuthorizationTests {
    /// U+05BC, a combining mark.
    static let mark = "\u{05BC}"
    /// A quote and a backslash, each followed by the mark.
    static let value = "a\"" + mark + "b\\" + mark + "c"
    /// `value` as the inside of a quoted-string: both escaped.
    static let escaped = "a\\\"" + mark + "b\\\\" + mark + "c"

    @Test func aQuoteOrBackslashFollowedByACombiningMarkIsEscaped() {
        let quoted = Array(DigestAuthorization.quoted(Self.value).unicodeScalars)
        let expected = Array(Self.escaped.unicodeScalars)
        #expect(quoted == expected)
        let leadingMark = Array(DigestAuthorization.quoted(Self.mark + "\"").unicodeScalars)
        let leadingMarkEscaped = Array((Self.mark + "\\\"").unicodeScalars)
        #expect(leadingMark == leadingMarkEscaped)
    }

    @Test func theAuthorizationValueQuotesEveryFieldOnUnicodeScalars() {
        let challenge = HTTPAuthChallenge(
            scheme: .digest,
            parameters: ["realm": Self.value, "nonce": Self.value, "opaque": Self.value, "qop": "auth"]
        )
        let header = DigestAuthorization.digest(
            challenge: challenge,
            user: Self.value,
            password: "Circle of Life",
            method: "GET",
            uri: Self.value,
            nonceCount: 1,
            clientNonce: "0a4f113b"
        )
        let scalars = Array(header.unicodeScalars)
        for name in ["username", "realm", "nonce", "uri", "opaque"] {
            let field = Array((name + "=\"" + Self.escaped + "\"").unicodeScalars)
            #expect(scalars.contains(field), "\(name) in \(header)")
        }
        let parsed = HTTPAuthChallenge.parse(header)
        #expect(parsed.count == 1)
        for name in ["username", "realm", "nonce", "uri", "opaque"] {
            let field = parsed.first?.parameters[name]
            #expect(field == Self.value, "\(name) in \(header)")
        }
    }
}
