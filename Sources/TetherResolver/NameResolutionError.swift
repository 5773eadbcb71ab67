/// A `getaddrinfo` failure: the resolver's status code (`EAI_NONAME`, `EAI_AGAIN`, ...), or `EAI_FAIL` when the name
/// resolved to no IPv4 or IPv6 address. Each module maps it to its own public error.
package struct NameResolutionError: Error, Sendable, Hashable {
    /// The `getaddrinfo` status code.
    package var code: Int32

    /// An error with `getaddrinfo`'s status `code`.
    package init(code: Int32) {
        self.code = code
    }
}
