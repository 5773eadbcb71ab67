import Foundation

/// One request of a test (the suite's `reqConfig`), read as the suite's client and origin read it.
struct CacheTestRequest: Sendable {
    /// The request's members as exported.
    var json: CacheTestJSON

    init(_ json: CacheTestJSON) {
        self.json = json
    }

    subscript(key: String) -> CacheTestJSON? { self.json[key] }

    func has(_ key: String) -> Bool { self.json[key] != nil }

    /// `setupCheck`: a failed check of `member` is a setup failure (the test could not be set up), not a failure.
    func isSetup(_ member: String) -> Bool {
        if self["setup"]?.bool == true { return true }
        return self["setup_tests"]?.array?.contains(.string(member)) ?? false
    }

    var method: String { self["request_method"]?.string ?? "GET" }
    var expectedType: String? { self["expected_type"]?.string }
    var pauseAfter: Bool { self["pause_after"]?.bool == true }

    /// `[name, value]` pairs (`request_headers`); a value may be a number (a date offset with `magic_ims`).
    var requestHeaders: [(name: String, value: CacheTestJSON)] {
        (self["request_headers"]?.array ?? []).compactMap { header in
            guard let parts = header.array, parts.count >= 2, let name = parts[0].string else { return nil }
            return (name, parts[1])
        }
    }

    /// `response_headers`: name, value (a number is a date offset in seconds) and whether the client checks it.
    var responseHeaders: [(name: String, value: CacheTestJSON, isChecked: Bool)] {
        (self["response_headers"]?.array ?? []).compactMap { header in
            guard let parts = header.array, parts.count >= 2, let name = parts[0].string else { return nil }
            return (name, parts[1], parts.count < 3 || parts[2].bool == true)
        }
    }

    /// The value of the last `response_headers` entry named `name` (the origin's `getHeader`).
    func responseHeader(_ name: String) -> CacheTestJSON? {
        self.responseHeaders.last { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// `rfc850date`: the date headers to write in the RFC 850 format.
    var rfc850Dates: [String] { self["rfc850date"]?.array?.compactMap(\.string) ?? [] }
}
