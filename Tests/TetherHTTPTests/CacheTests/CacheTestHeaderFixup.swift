import Foundation
import TetherConcurrency

/// The suite's `fixupHeader` (test-engine/lib/header-fixup.mjs), shared by the origin and the checks: a number in
/// a date header is an offset in seconds from the origin's clock (its `Server-Now`, in milliseconds), and with
/// `magic_locations` a `Location` or `Content-Location` is relative to the test's URL path (`Server-Base-Url`).
enum CacheTestHeaderFixup {
    static let dateHeaders: Set<String> = [
        "date", "expires", "last-modified", "if-modified-since", "if-unmodified-since",
    ]
    static let locationHeaders: Set<String> = ["location", "content-location"]

    /// The value to use for header `name` with the configured `value`, given the response's `Server-Now` and
    /// `Server-Base-Url`.
    static func fixup(
        name: String,
        value: CacheTestJSON,
        serverNow: String?,
        baseURL: String?,
        request: CacheTestRequest
    ) -> CacheTestJSON {
        let lowered = name.lowercased()
        var value = value
        if self.dateHeaders.contains(lowered), let offset = value.number, offset == offset.rounded() {
            let now = serverNow.flatMap { Double($0.prefix { $0.isNumber || $0 == "-" }) }
            let rfc850 = request.rfc850Dates.contains(lowered)
            value = .string(
                now.map { self.httpDate(milliseconds: $0 + offset * 1000, rfc850: rfc850) } ?? "Invalid Date"
            )
        }
        if self.locationHeaders.contains(lowered), request["magic_locations"]?.bool == true {
            let base = baseURL ?? "undefined"
            if let text = value.string, !text.isEmpty {
                value = .string("\(base)/\(text)")
            } else {
                value = .string(base)
            }
        }
        return value
    }

    /// JavaScript's `Date.toGMTString()` (IMF-fixdate), or the RFC 850 form the suite writes.
    static func httpDate(milliseconds: Double, rfc850: Bool = false) -> String {
        let date = Date(timeIntervalSince1970: (milliseconds / 1000).rounded(.down))
        return self.formatters.withLock { formatters in
            (rfc850 ? formatters.rfc850 : formatters.imf).string(from: date)
        }
    }

    private struct Formatters {
        let imf = Self.make("EEE, dd MMM yyyy HH:mm:ss 'GMT'")
        let rfc850 = Self.make("EEEE, dd-MMM-yy HH:mm:ss 'GMT'")

        static func make(_ format: String) -> DateFormatter {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            return formatter
        }
    }

    private static let formatters = LockedBox(Formatters())
}
