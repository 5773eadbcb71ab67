import Crypto
import CryptoExtras

public import struct Foundation.Data

/// What a server keeps of a password: PBKDF2-HMAC-SHA256 (RFC 8018) of it, with a random salt of 16 bytes and the
/// iteration count, so that the count can grow for new passwords while old ones still verify.
public struct PasswordVerifier: Codable, Sendable, Hashable {
    /// The iterations given to new passwords: OWASP's figure for PBKDF2-HMAC-SHA256 (2023).
    public static let defaultIterations = 600_000

    /// The algorithm's name, `pbkdf2-sha256`.
    public var algorithm: String
    /// The PBKDF2 iteration count.
    public var iterations: Int
    /// The salt (16 random bytes).
    public var salt: Data
    /// The 32-byte derived key.
    public var hash: Data

    /// The verifier of `password`, with a new random salt.
    /// - Parameters:
    ///   - password: the password (only its derived key is kept).
    ///   - iterations: at least 1; ``defaultIterations`` unless a test needs speed.
    public init(password: String, iterations: Int = defaultIterations) {
        let salt = Data(SymmetricKey(size: .init(bitCount: 128)).withUnsafeBytes { Array($0) })
        self.init(algorithm: "pbkdf2-sha256", iterations: iterations, salt: salt, hash: Data())
        self.hash = Self.derive(password, salt: salt, iterations: iterations)
    }

    private init(algorithm: String, iterations: Int, salt: Data, hash: Data) {
        self.algorithm = algorithm
        self.iterations = iterations
        self.salt = salt
        self.hash = hash
    }

    /// Whether `password` is the one this verifier was made from; the hashes are compared in constant time.
    public func verifies(_ password: String) -> Bool {
        guard algorithm == "pbkdf2-sha256", iterations >= 1, hash.count == 32 else { return false }
        return constantTimeEquals(Self.derive(password, salt: salt, iterations: iterations), hash)
    }

    /// PBKDF2-HMAC-SHA256 of `password` with `salt`, 32 bytes (or `length`).
    static func derive(_ password: String, salt: Data, iterations: Int, length: Int = 32) -> Data {
        // Throws only for an output length or iteration count out of range, which callers never pass.
        let key = try? KDF.Insecure.PBKDF2.deriveKey(
            from: Array(password.utf8),
            salt: salt,
            using: .sha256,
            outputByteCount: length,
            unsafeUncheckedRounds: max(iterations, 1)
        )
        return key.map { key in key.withUnsafeBytes { Data($0) } } ?? Data()
    }
}

/// Whether `a` and `b` hold the same bytes, in a time that depends on their lengths only.
func constantTimeEquals(_ a: Data, _ b: Data) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for (x, y) in zip(a, b) { difference |= x ^ y }
    return difference == 0
}
