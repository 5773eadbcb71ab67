import Crypto

/// The two hash functions that HTTP Digest authentication (RFC 7616) needs, and that the disk cache uses to name its
/// files, from swift-crypto (BoringSSL's implementations on Linux, CryptoKit on Apple platforms).
enum Digests {
    /// MD5 of `message` (Digest's default algorithm; not for anything that needs collision resistance).
    static func md5(_ message: [UInt8]) -> [UInt8] {
        Array(Insecure.MD5.hash(data: message))
    }

    /// SHA-256 of `message`.
    static func sha256(_ message: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: message))
    }

    /// Lowercase hexadecimal, two digits per byte.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
