import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPLoad {
    static func canonicalize(_ request: URLRequest) -> URLRequest {
        if let url = request.url, Self.isCanonical(url.absoluteString) { return request }
        var request = request
        if let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: true) {
            components.scheme = components.scheme?.lowercased()
            components.host = components.host?.lowercased()
            if components.path.isEmpty { components.path = "/" }
            if let canonical = components.url, canonical != url { request.url = canonical }
        }
        return request
    }

    /// True when `string` already has a lowercase scheme and host and a path (`http://host[:port]/...`): the
    /// common case skips a parse with `URLComponents`. Anything else (user info, uppercase, no path) is left to it.
    static func isCanonical(_ string: String) -> Bool {
        var string = string
        return string.withUTF8 { Self.isCanonical(bytes: UnsafeBufferPointer(rebasing: $0.prefix(2048))) }
    }

    private static func isCanonical(bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        // Scheme: lowercase letters up to "://".
        while index < bytes.count, bytes[index] >= 0x61, bytes[index] <= 0x7A { index += 1 }
        guard index > 0, index + 2 < bytes.count, bytes[index] == 0x3A, bytes[index + 1] == 0x2F,
            bytes[index + 2] == 0x2F
        else { return false }
        index += 3
        // Authority: no uppercase letter, no user info, no percent-encoding; it must end with "/" (a path).
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x2F { break }
            if byte == 0x3F || byte == 0x23 || byte == 0x40 || byte == 0x25 || (byte >= 0x41 && byte <= 0x5A) {
                return false
            }
            index += 1
        }
        return index > start && index < bytes.count
    }
}
