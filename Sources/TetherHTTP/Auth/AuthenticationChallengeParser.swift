import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One parsed `WWW-Authenticate` / `Proxy-Authenticate` challenge that Tether can answer (Basic or Digest).
struct HTTPAuthChallenge: Sendable, Equatable {
    enum Scheme: Sendable, Equatable {
        case basic
        case digest
    }

    var scheme: Scheme
    var parameters: [String: String]

    var realm: String? { self.parameters["realm"] }

    var authenticationMethod: String {
        switch self.scheme {
        case .basic: NSURLAuthenticationMethodHTTPBasic
        case .digest: NSURLAuthenticationMethodHTTPDigest
        }
    }

    /// Parses every challenge in the header values and returns the strongest one Tether supports
    /// (Digest with a supported algorithm before Basic), or nil.
    static func strongest(in headerValues: [String]) -> HTTPAuthChallenge? {
        let all = headerValues.flatMap { self.parse($0) }
        if let digest = all.first(where: { $0.scheme == .digest && DigestAuthorization.supports($0) }) {
            return digest
        }
        return all.first(where: { $0.scheme == .basic })
    }

    /// Parses a header value that may hold several challenges: `Digest realm="a", nonce="b", Basic realm="c"`.
    ///
    /// Works on Unicode scalars, as a server writes the header's bytes: a quote or backslash followed by a
    /// combining mark is one `Character` but still a quote or backslash.
    static func parse(_ value: String) -> [HTTPAuthChallenge] {
        var result: [HTTPAuthChallenge] = []
        var scanner = Substring(value).unicodeScalars
        var current: (scheme: String, parameters: [String: String])?

        func flush() {
            if let current {
                switch current.scheme.lowercased() {
                case "basic": result.append(HTTPAuthChallenge(scheme: .basic, parameters: current.parameters))
                case "digest": result.append(HTTPAuthChallenge(scheme: .digest, parameters: current.parameters))
                default: break
                }
            }
            current = nil
        }

        while true {
            scanner = scanner.drop(while: { $0 == " " || $0 == "," || $0 == "\t" })
            if scanner.isEmpty { break }
            let token = scanner.prefix(while: { $0 != " " && $0 != "=" && $0 != "," && $0 != "\t" })
            scanner = scanner[token.endIndex...]
            let afterSpaces = scanner.drop(while: { $0 == " " || $0 == "\t" })
            if afterSpaces.first == "=" && current != nil {
                // auth-param: name=value or name="value"
                scanner = afterSpaces.dropFirst().drop(while: { $0 == " " || $0 == "\t" })
                var parameterValue = String.UnicodeScalarView()
                if scanner.first == "\"" {
                    scanner = scanner.dropFirst()
                    while let scalar = scanner.popFirst() {
                        if scalar == "\\", let escaped = scanner.popFirst() {
                            parameterValue.append(escaped)
                        } else if scalar == "\"" {
                            break
                        } else {
                            parameterValue.append(scalar)
                        }
                    }
                } else {
                    let raw = scanner.prefix(while: { $0 != "," && $0 != " " && $0 != "\t" })
                    parameterValue.append(contentsOf: raw)
                    scanner = scanner[raw.endIndex...]
                }
                current?.parameters[String(Substring(token)).lowercased()] = String(parameterValue)
            } else {
                // A new scheme token starts the next challenge.
                flush()
                current = (String(Substring(token)), [:])
            }
        }
        flush()
        return result
    }
}
