#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed name lookup: getaddrinfo's answer for a host.
///
/// Only ever seen as the ``GCDAsyncSocketError/underlying`` error of an ``GCDAsyncSocketError`` in the `.netDB` domain.
public struct DNSLookupError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `EAI_*` value getaddrinfo returned (`EAI_FAIL` when it returned no usable address).
    public var code: Int32
    /// The host name that was looked up.
    public var host: String
    /// getaddrinfo's text for the code, with the host.
    public var description: String

    init(code: Int32, host: String) {
        self.code = code
        self.host = host
        self.description = "\(String(cString: gai_strerror(code))) (\(host))"
    }
}
