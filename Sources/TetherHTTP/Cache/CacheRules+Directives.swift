import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CacheRules {
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
            // A directive given twice counts once, as first given (RFC 9111 §4.2.1: use the first occurrence).
            if result[name] == nil { result[name] = self.unquoted(argument) ?? argument }
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
}
