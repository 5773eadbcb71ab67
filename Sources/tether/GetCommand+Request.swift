import ArgumentParser
import Foundation
import NIOSSL

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `-X`, `-d`, `--ca` and `--insecure`: what curl users reach for first, with curl's meaning.
extension GetCommand {
    /// Whether `method` is an HTTP method name: a token of RFC 9110's `tchar`s.
    static func isToken(_ method: String) -> Bool {
        let punctuation = Set("!#$%&'*+-.^_`|~".unicodeScalars)
        return !method.isEmpty
            && method.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII
                    && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                        || punctuation.contains(scalar))
            }
    }

    /// The body of the `-d` values as curl sends it: each `@FILE` (`@-`: standard input) read without its carriage
    /// returns and newlines, each other value as it is, joined with `&`; nil without `-d`.
    /// - Throws: `ValidationError` naming a file that cannot be read.
    static func body(of values: [String], standardInput: () -> Data) throws -> Data? {
        guard !values.isEmpty else { return nil }
        var parts: [Data] = []
        for value in values {
            guard value.hasPrefix("@") else {
                parts.append(Data(value.utf8))
                continue
            }
            let path = String(value.dropFirst())
            let contents: Data
            if path == "-" {
                contents = standardInput()
            } else {
                guard let read = FileManager.default.contents(atPath: path) else {
                    throw ValidationError("-d: cannot read \(path)")
                }
                contents = read
            }
            parts.append(contents.filter { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") })
        }
        return Data(parts.joined(separator: Data("&".utf8)))
    }

    /// Sets the method (`-X`, else POST with `-d`, else GET) and the `-d` body with curl's default content type
    /// unless a `--header` gives one.
    func applyMethodAndBody(to request: inout URLRequest) throws {
        let body = try Self.body(of: self.data) { FileHandle.standardInput.readDataToEndOfFile() }
        request.httpMethod = self.method ?? (body == nil ? "GET" : "POST")
        guard let body else { return }
        request.httpBody = body
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        }
    }

    /// The TLS settings for https: the system's roots (nil) unless `--ca` names others; no verification with
    /// `--insecure`.
    func tlsConfiguration() throws -> TLSConfiguration? {
        guard self.ca != nil || self.insecure else { return nil }
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let ca = self.ca {
            configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(ca))
        }
        if self.insecure {
            configuration.certificateVerification = .none
        }
        return configuration
    }
}
