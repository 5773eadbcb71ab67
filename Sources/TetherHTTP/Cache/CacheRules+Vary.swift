import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CacheRules {
    static func varyNames(_ headers: [String: String]) -> [String] {
        guard let vary = HeaderLookup.value("Vary", in: headers) else { return [] }
        return vary.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty }
    }

    /// The request fields that carry secrets: an entry keeps a digest of their values, never the values (a disk
    /// entry would otherwise hold a user's token or session cookie).
    static let secretFieldNames: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// The values of the request fields named by `Vary`, as an entry keeps them: normalised, and for
    /// ``secretFieldNames`` a SHA-256 digest.
    static func varyValues(for request: URLRequest, headers: [String: String]) -> [String: String] {
        var values: [String: String] = [:]
        for name in self.varyNames(headers) {
            values[name] = self.keptVaryValue(name: name, request.value(forHTTPHeaderField: name) ?? "")
        }
        return values
    }

    static func matchesVary(_ entry: CacheEntry, request: URLRequest) -> Bool {
        for name in self.varyNames(entry.headers) {
            let value = request.value(forHTTPHeaderField: name) ?? ""
            let stored = self.normalizedVaryValue(name: name, entry.varyValues[name] ?? "")
            if self.keptVaryValue(name: name, value) == stored { continue }
            if name == "accept-language", self.languageSelects(entry, acceptLanguage: value) { continue }
            return false
        }
        return true
    }

    /// Whether a response in one `Content-Language` is the one a request with this `Accept-Language` selects: the
    /// request's most preferred language range (the highest q-value, the first of equals; not `*`) matches the
    /// response's language (RFC 4647 §3.3.1 basic filtering: `de` matches `de` and `de-CH`).
    static func languageSelects(_ entry: CacheEntry, acceptLanguage: String) -> Bool {
        guard let language = entry.header("Content-Language")?.trimmingCharacters(in: .whitespaces).lowercased(),
            !language.isEmpty, !language.contains(",")
        else { return false }
        var best: (range: String, weight: Double)?
        for member in acceptLanguage.split(separator: ",") {
            let parts = member.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let range = parts.first, !range.isEmpty else { continue }
            var weight = 1.0
            for parameter in parts.dropFirst() where parameter.hasPrefix("q=") {
                guard let value = Double(parameter.dropFirst(2)), value >= 0, value <= 1 else { return false }
                weight = value
            }
            if weight > 0, weight > (best?.weight ?? 0) { best = (range, weight) }
        }
        guard let range = best?.range, range != "*" else { return false }
        return language == range || language.hasPrefix(range + "-")
    }

    /// Whether `new`, stored from a response to some request, may be another variant than `old`: they differ in the
    /// value of a field both vary on. Otherwise `old` would be chosen for `new`'s request too, and `new` replaces
    /// it (also when `old` varies on a field `new` does not, whose value for `new`'s request is not known).
    static func isOtherVariant(_ new: CacheEntry, than old: CacheEntry) -> Bool {
        self.varyNames(old.headers).contains { name in
            guard let value = new.varyValues[name] else { return false }
            return self.normalizedVaryValue(name: name, value)
                != self.normalizedVaryValue(name: name, old.varyValues[name] ?? "")
        }
    }

    /// Whether a request that matches no stored variant may send `entry`'s entity tag, so that a 304 lets it reuse
    /// `entry` (RFC 9111 §4.3.1): not when `entry` varies on a credential (``secretFieldNames``), whose 304 would
    /// hand one user's response to another on the server's word alone.
    static func mayValidateOtherVariants(_ entry: CacheEntry) -> Bool {
        entry.header("ETag") != nil && entry.statusCode != 206
            && !self.varyNames(entry.headers).contains { self.secretFieldNames.contains($0) }
    }

    /// `value` of the field `name` (lower case) as an entry keeps it.
    private static func keptVaryValue(name: String, _ value: String) -> String {
        let normalized = self.normalizedVaryValue(name: name, value)
        guard !normalized.isEmpty, self.secretFieldNames.contains(name) else { return normalized }
        return "sha256:" + Digests.hex(Digests.sha256(Array(normalized.utf8)))
    }

    /// `value` of the field `name` (lower case) normalised for comparison: a list without the whitespace around its
    /// commas; `Accept-Language` also without case and order, which do not change its meaning (language ranges
    /// are matched without case, RFC 4647 §2; the preference is in the q-values, not the order).
    static func normalizedVaryValue(name: String, _ value: String) -> String {
        guard name == "accept-language" else { return self.normalizedList(value) }
        return value.split(separator: ",")
            .map { member in
                member.split(separator: ";", omittingEmptySubsequences: false)
                    .map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ";").lowercased()
            }
            .filter { !$0.isEmpty }.sorted().joined(separator: ",")
    }

    /// A field value with the whitespace around its commas and at its ends removed: the same list whether it came
    /// as `1, 2`, ` 1,2 ` or as two field lines (which `URLRequest` joins with a bare comma).
    static func normalizedList(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == 0x20 || $0 == 0x09 }) else { return value }
        return value.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ",")
    }
}
