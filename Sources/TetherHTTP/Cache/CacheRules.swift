import Foundation
import TetherConcurrency

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// RFC 9111 rules for a private cache: what may be stored, freshness, age and when to revalidate.
enum CacheRules {
    static let storableStatuses: Set<Int> = [200, 203, 204, 300, 301, 404, 405, 410, 414, 501]
    /// The headers that can make a response storable (with a `max-age` directive, a date, or a validator).
    static let freshnessHeaderNames = ["Cache-Control", "Expires", "ETag", "Last-Modified"]

    /// Parses `Cache-Control` into lowercased directive names and their values (RFC 9111 §5.2). A quoted-string
    /// value is unquoted and unescaped, and the commas inside it do not separate directives. Works on Unicode
    /// scalars: a quote or comma followed by a combining mark is still a quote or comma.
    static func directives(_ value: String?) -> [String: String] {
        guard let value else { return [:] }
        var result: [String: String] = [:]
        for part in self.directiveParts(value) {
            let equals = part.firstIndex(of: "=")
            let name = self.trimmed(part[..<(equals ?? part.endIndex)]).lowercased()
            guard !name.isEmpty else { continue }
            var argument = ""
            if let equals {
                argument = self.trimmed(part[part.index(after: equals)...])
            }
            result[name] = self.unquoted(argument) ?? argument
        }
        return result
    }

    /// The comma-separated parts of a header value. A quoted string starts only where a directive's argument does
    /// (after `=` and any spaces); commas inside it do not separate.
    private static func directiveParts(_ value: String) -> [Substring.UnicodeScalarView] {
        let scalars = Substring(value).unicodeScalars
        var parts: [Substring.UnicodeScalarView] = []
        var start = scalars.startIndex
        var afterEquals = false
        var argumentStarted = false
        var inQuotes = false
        var escaped = false
        for index in scalars.indices {
            let scalar = scalars[index]
            if inQuotes {
                if escaped {
                    escaped = false
                } else if scalar == "\\" {
                    escaped = true
                } else if scalar == "\"" {
                    inQuotes = false
                }
                continue
            }
            switch scalar {
            case ",":
                parts.append(scalars[start..<index])
                start = scalars.index(after: index)
                afterEquals = false
                argumentStarted = false
            case "=" where !afterEquals:
                afterEquals = true
            case " ", "\t":
                break
            default:
                if scalar == "\"" && afterEquals && !argumentStarted {
                    inQuotes = true
                }
                argumentStarted = argumentStarted || afterEquals
            }
        }
        parts.append(scalars[start...])
        return parts
    }

    private static let whitespaces = CharacterSet.whitespaces

    /// `scalars` without leading and trailing `CharacterSet.whitespaces`: what `trimmingCharacters(in: .whitespaces)`
    /// gives, without its round trip through `NSString` (on Linux, most of the time spent parsing a header).
    private static func trimmed(_ scalars: Substring.UnicodeScalarView) -> String {
        var scalars = scalars
        while let first = scalars.first, self.whitespaces.contains(first) {
            scalars.removeFirst()
        }
        while let last = scalars.last, self.whitespaces.contains(last) {
            scalars.removeLast()
        }
        return String(Substring(scalars))
    }

    /// The contents of `text` if it is exactly one quoted-string, with its quoted-pairs unescaped; else nil.
    private static func unquoted(_ text: String) -> String? {
        var scalars = Substring(text).unicodeScalars
        guard scalars.first == "\"" else { return nil }
        scalars.removeFirst()
        var result = String.UnicodeScalarView()
        while let scalar = scalars.popFirst() {
            switch scalar {
            case "\\":
                guard let escaped = scalars.popFirst() else { return nil }
                result.append(escaped)
            case "\"":
                return scalars.isEmpty ? String(result) : nil
            default:
                result.append(scalar)
            }
        }
        return nil
    }

    static func isStorable(request: URLRequest, statusCode: Int, headers: [String: String]) -> Bool {
        guard HTTPLoad.method(of: request) == "GET" else { return false }
        guard self.storableStatuses.contains(statusCode) else { return false }
        // Storing needs max-age, Expires or a validator: a response with none of their headers (the common case)
        // is decided in one pass over its names, without parsing any directive.
        guard
            headers.keys.contains(where: { name in
                self.freshnessHeaderNames.contains { HeaderLookup.namesMatch(name, $0) }
            })
        else { return false }
        let requestDirectives = self.directives(request.value(forHTTPHeaderField: "Cache-Control"))
        let responseDirectives = self.directives(HeaderLookup.value("Cache-Control", in: headers))
        if requestDirectives["no-store"] != nil || responseDirectives["no-store"] != nil { return false }
        if let vary = HeaderLookup.value("Vary", in: headers),
            vary.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == "*" })
        {
            return false
        }
        let hasMaxAge = responseDirectives["max-age"].flatMap { Int($0) } != nil
        let hasExpires = HeaderLookup.value("Expires", in: headers) != nil
        let hasValidator =
            HeaderLookup.value("ETag", in: headers) != nil || HeaderLookup.value("Last-Modified", in: headers) != nil
        return hasMaxAge || hasExpires || hasValidator
    }

    static func varyNames(_ headers: [String: String]) -> [String] {
        guard let vary = HeaderLookup.value("Vary", in: headers) else { return [] }
        return vary.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty }
    }

    static func varyValues(for request: URLRequest, headers: [String: String]) -> [String: String] {
        var values: [String: String] = [:]
        for name in self.varyNames(headers) {
            values[name] = request.value(forHTTPHeaderField: name) ?? ""
        }
        return values
    }

    static func matchesVary(_ entry: CacheEntry, request: URLRequest) -> Bool {
        for name in self.varyNames(entry.headers)
        where (request.value(forHTTPHeaderField: name) ?? "") != (entry.varyValues[name] ?? "") {
            return false
        }
        return true
    }

    /// HTTP-date parsers (IMF-fixdate, RFC 850, asctime), made once (DateFormatter is expensive to create), and the
    /// dates they parsed last. A cache decision reads `Date` up to three times and `Expires` twice, and every lookup
    /// of a stored response reads them again; one `DateFormatter.date(from:)` copies ICU's formatter (tens of
    /// microseconds) and, in swift-corelibs-foundation, leaks a `CFCharacterSet`. A string is parsed once.
    private static let dateParsing = LockedBox(DateParsing())

    private struct DateParsing {
        let formatters = ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"]
            .map { format in
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.timeZone = TimeZone(identifier: "GMT")
                formatter.dateFormat = format
                return formatter
            }
        /// What the formatters made of the strings parsed last (nil: none could); emptied when full.
        var recent: [String: Date?] = [:]
        static let recentLimit = 64

        mutating func date(from text: String) -> Date? {
            if let known = self.recent[text] { return known }
            // An HTTP-date is visible ASCII and spaces (RFC 9110 §5.6.7); anything else is not one. Checked before
            // DateFormatter sees it: swift-corelibs-foundation's `date(from:)` traps ("Incorrect range") when its
            // parse stops before a combining mark (found by `FuzzCacheControl`, in an `Expires` header).
            let isVisibleASCII = text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
            let date = isVisibleASCII ? self.formatters.lazy.compactMap { $0.date(from: text) }.first : nil
            if self.recent.count >= Self.recentLimit {
                self.recent.removeAll(keepingCapacity: true)
            }
            self.recent[text] = .some(date)
            return date
        }
    }

    static func parseDate(_ text: String?) -> Date? {
        guard let text else { return nil }
        return self.dateParsing.withLock { $0.date(from: text) }
    }

    /// Freshness lifetime in seconds: `max-age`, else `Expires − Date`; no heuristic freshness.
    static func freshnessLifetime(_ entry: CacheEntry) -> TimeInterval {
        let directives = self.directives(entry.header("Cache-Control"))
        if let maxAge = directives["max-age"].flatMap({ Int($0) }) { return TimeInterval(maxAge) }
        if let expiresText = entry.header("Expires") {
            guard let expires = self.parseDate(expiresText) else { return 0 }  // invalid Expires = already expired
            let date = self.parseDate(entry.header("Date")) ?? entry.responseDate
            return expires.timeIntervalSince(date)
        }
        return 0
    }

    /// Current age (RFC 9111 §4.2.3), with `Age` on receipt plus the time since.
    static func currentAge(_ entry: CacheEntry, now: Date) -> TimeInterval {
        let dateValue = self.parseDate(entry.header("Date")) ?? entry.responseDate
        let apparentAge = max(0, entry.responseDate.timeIntervalSince(dateValue))
        let ageValue = entry.header("Age").flatMap { TimeInterval($0) } ?? 0
        let responseDelay = max(0, entry.responseDate.timeIntervalSince(entry.requestDate))
        let correctedAge = max(apparentAge, ageValue + responseDelay)
        return correctedAge + max(0, now.timeIntervalSince(entry.responseDate))
    }

    static func isFresh(_ entry: CacheEntry, now: Date = Date()) -> Bool {
        self.freshnessLifetime(entry) > self.currentAge(entry, now: now)
    }

    /// True when the stored entry may be used without asking the server (protocol cache policy).
    static func canUseWithoutRevalidation(_ entry: CacheEntry, request: URLRequest, now: Date = Date()) -> Bool {
        let requestDirectives = self.directives(request.value(forHTTPHeaderField: "Cache-Control"))
        if requestDirectives["no-cache"] != nil { return false }
        if request.value(forHTTPHeaderField: "Pragma")?.lowercased().contains("no-cache") == true { return false }
        if let maxAge = requestDirectives["max-age"].flatMap({ Int($0) }),
            self.currentAge(entry, now: now) > TimeInterval(maxAge)
        {
            return false
        }
        let responseDirectives = self.directives(entry.header("Cache-Control"))
        if responseDirectives["no-cache"] != nil { return false }
        return self.isFresh(entry, now: now)
    }

    static func mustRevalidate(_ entry: CacheEntry) -> Bool {
        let directives = self.directives(entry.header("Cache-Control"))
        return directives["must-revalidate"] != nil || directives["no-cache"] != nil
    }

    /// The cache key: the URL without its fragment.
    static func key(for url: URL) -> String {
        // Without a fragment the key is the URL itself: no parse per lookup.
        let absolute = url.absoluteString
        if !absolute.utf8.contains(UInt8(ascii: "#")) { return absolute }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return url.absoluteString }
        components.fragment = nil
        return components.string ?? url.absoluteString
    }
}
