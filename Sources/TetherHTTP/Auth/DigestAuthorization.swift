import Foundation

/// Builds `Authorization` header values for Basic and Digest (RFC 7617, RFC 7616: MD5, SHA-256, `qop=auth`).
enum DigestAuthorization {
    static func supports(_ challenge: HTTPAuthChallenge) -> Bool {
        guard challenge.parameters["nonce"] != nil else { return false }
        let algorithm = (challenge.parameters["algorithm"] ?? "MD5").uppercased()
        guard ["MD5", "SHA-256", "MD5-SESS", "SHA-256-SESS"].contains(algorithm) else { return false }
        if let qop = challenge.parameters["qop"] {
            return qop.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == "auth" }
        }
        return true
    }

    static func basic(user: String, password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// - Parameters:
    ///   - nonceCount: The `nc` value, starting at 1 for each new nonce.
    ///   - clientNonce: The `cnonce` value (random in production, fixed in tests).
    static func digest(
        challenge: HTTPAuthChallenge,
        user: String,
        password: String,
        method: String,
        uri: String,
        nonceCount: Int,
        clientNonce: String
    ) -> String {
        let parameters = challenge.parameters
        let realm = parameters["realm"] ?? ""
        let nonce = parameters["nonce"] ?? ""
        let algorithmName = parameters["algorithm"] ?? "MD5"
        let algorithm = algorithmName.uppercased()
        let hash: (String) -> String = { text in
            let bytes = Array(text.utf8)
            return Digests.hex(algorithm.hasPrefix("SHA-256") ? Digests.sha256(bytes) : Digests.md5(bytes))
        }
        var ha1 = hash("\(user):\(realm):\(password)")
        if algorithm.hasSuffix("-SESS") {
            ha1 = hash("\(ha1):\(nonce):\(clientNonce)")
        }
        let ha2 = hash("\(method):\(uri)")
        let usesQop = parameters["qop"] != nil
        let nc = String(format: "%08x", nonceCount)
        let response =
            usesQop ? hash("\(ha1):\(nonce):\(nc):\(clientNonce):auth:\(ha2)") : hash("\(ha1):\(nonce):\(ha2)")
        var fields = [
            "username=\"\(self.quoted(user))\"",
            "realm=\"\(self.quoted(realm))\"",
            "nonce=\"\(self.quoted(nonce))\"",
            "uri=\"\(self.quoted(uri))\"",
            "algorithm=\(algorithmName)",
            "response=\"\(response)\"",
        ]
        if usesQop {
            fields += ["qop=auth", "nc=\(nc)", "cnonce=\"\(clientNonce)\""]
        }
        if let opaque = parameters["opaque"] {
            fields.append("opaque=\"\(self.quoted(opaque))\"")
        }
        return "Digest " + fields.joined(separator: ", ")
    }

    static func makeClientNonce() -> String {
        Digests.hex((0..<16).map { _ in UInt8.random(in: 0...255) })
    }

    /// `text` as the inside of a quoted-string: every `"` and `\` escaped. Works on Unicode scalars: a quote
    /// followed by a combining mark is one `Character` (which `replacingOccurrences` would leave alone) but still
    /// a quote on the wire, where it would end the value (found by `FuzzCacheControl`).
    static func quoted(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "\"" || scalar == "\\" {
                result.append("\\")
            }
            result.append(scalar)
        }
        return String(result)
    }
}
