import Foundation
import FuzzSupport
@_spi(Fuzzing) import TetherHTTP

/// Input: NUL-separated `WWW-Authenticate` values (the first two bytes of the last one, if any, pick the user and
/// URI of the Digest answer).
@main
enum FuzzAuthChallenge {
    static func main() {
        runFuzzer(fuzzAuthChallenge)
    }
}

func fuzzAuthChallenge(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let values = FuzzInput(data, size).rest.split(separator: 0, omittingEmptySubsequences: false)
        .map { String(decoding: $0, as: UTF8.self) }
    var all: [HeaderParsing.Challenge] = []
    for value in values {
        let challenges = HeaderParsing.challenges(in: value)
        require(HeaderParsing.challenges(in: value) == challenges, "parsing twice differs")
        checkBounds(challenges, value)
        checkRoundTrip(challenges)
        all += challenges
    }

    // The strongest challenge is the first answerable Digest, else the first Basic.
    let expected = all.first { $0.isDigest && HeaderParsing.supportsDigest($0) } ?? all.first { !$0.isDigest }
    require(HeaderParsing.strongestChallenge(in: values) == expected, "strongest challenge is not the expected one")

    // The Digest answer is well formed: it parses (as auth-params) back to the challenge's realm, nonce and opaque.
    if let digest = expected, digest.isDigest {
        let user = values.count > 1 ? values[values.count - 1] : "Mufasa"
        let uri = values.count > 2 ? values[values.count - 2] : "/dir/index.html"
        checkDigestAnswer(digest, user: user, uri: uri)
    }
    return 0
}

/// Each challenge needs its scheme's five bytes at least; names are lowercased; values come from the input.
private func checkBounds(_ challenges: [HeaderParsing.Challenge], _ value: String) {
    require(challenges.count * 5 <= value.utf8.count, "more challenges than the header can hold")
    var valueBytes = 0
    for challenge in challenges {
        for (name, parameter) in challenge.parameters {
            require(name == name.lowercased(), "parameter name \(name) is not lowercased")
            valueBytes += parameter.utf8.count
        }
    }
    require(valueBytes <= value.utf8.count, "parameter values longer than the header")
}

/// The challenges written back (values as quoted strings) parse to themselves. Parameters without a name (`=v`,
/// which the parser accepts) are left out: written after a scheme, `Digest ="v"` reads as a parameter named `digest`
/// of the challenge before.
private func checkRoundTrip(_ challenges: [HeaderParsing.Challenge]) {
    let challenges = challenges.map { challenge in
        let named = challenge.parameters.filter { !$0.key.isEmpty }
        return HeaderParsing.Challenge(isDigest: challenge.isDigest, parameters: named)
    }
    let written = challenges.map { challenge in
        let parameters = challenge.parameters.sorted { $0.key < $1.key }.map {
            "\($0.key)=\"\(quotedStringContents($0.value))\""
        }
        return ([challenge.isDigest ? "Digest" : "Basic"] + [parameters.joined(separator: ", ")])
            .joined(separator: " ")
    }
    let text = written.joined(separator: ", ")
    require(HeaderParsing.challenges(in: text) == challenges, "written back as \(text) parses differently")
}

private func checkDigestAnswer(_ challenge: HeaderParsing.Challenge, user: String, uri: String) {
    let answer = HeaderParsing.digestAuthorization(for: challenge, user: user, password: "Circle of Life", uri: uri)
    let parsed = HeaderParsing.challenges(in: answer)
    require(parsed.count == 1 && parsed[0].isDigest, "the answer \(answer) is not one Digest credential")
    let fields = parsed[0].parameters
    require(fields["username"] == user && fields["uri"] == uri, "the answer's username or uri differs")
    require(fields["realm"] == challenge.parameters["realm"] ?? "", "the answer's realm differs")
    require(fields["nonce"] == challenge.parameters["nonce"], "the answer's nonce differs")
    require(fields["opaque"] == challenge.parameters["opaque"], "the answer's opaque differs")
    let response = fields["response"] ?? ""
    require(
        [32, 64].contains(response.utf8.count) && response.allSatisfy(\.isHexDigit),
        "the answer's response \(response) is not a digest"
    )
}
