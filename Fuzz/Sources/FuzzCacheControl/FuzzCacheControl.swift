import Foundation
import FuzzSupport
@_spi(Fuzzing) import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Input: NUL-separated header values: the response's `Cache-Control`, then (each optional) the request's
/// `Cache-Control`, `Expires`, `Date` and `Age`.
@main
enum FuzzCacheControl {
    static func main() {
        runFuzzer(fuzzCacheControl)
    }
}

private let requestURL = URL(string: "http://fuzz.invalid/")!

/// RFC 9110 `tchar`: what a directive name made only of them must round-trip as.
private let tokenCharacters = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

func fuzzCacheControl(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let fields = FuzzInput(data, size).rest.split(separator: 0, omittingEmptySubsequences: false)
        .map { String(decoding: $0, as: UTF8.self) }
    let value = fields[0]
    let directives = HeaderParsing.cacheControlDirectives(value)
    require(HeaderParsing.cacheControlDirectives(value) == directives, "parsing twice differs")

    // Names are lowercased and trimmed, hold no separator; the output is bounded by the input.
    let commas = value.utf8.count(where: { $0 == UInt8(ascii: ",") })
    require(directives.count <= commas + 1, "more directives than comma-separated parts")
    var valueBytes = 0
    for (name, argument) in directives {
        require(name == name.lowercased(), "directive name \(name) is not lowercased")
        require(name.trimmingCharacters(in: .whitespaces) == name, "directive name \(name) is not trimmed")
        require(!name.contains(",") && !name.contains("="), "directive name \(name) holds a separator")
        valueBytes += argument.utf8.count
    }
    require(valueBytes <= value.utf8.count, "directive values longer than the header")

    // Directives with token names written back in RFC 9111 syntax (values as quoted strings) parse to themselves.
    let tokens = directives.filter { !$0.key.isEmpty && $0.key.allSatisfy(tokenCharacters.contains) }
    let written = tokens.sorted { $0.key < $1.key }.map { name, argument in
        argument.isEmpty ? name : "\(name)=\"\(quotedStringContents(argument))\""
    }
    let reparsed = HeaderParsing.cacheControlDirectives(written.joined(separator: ", "))
    require(reparsed == tokens, "written back \(written) parses to \(reparsed), not \(tokens)")

    // The cache's decision follows the directives.
    var headers = ["Cache-Control": value]
    for (name, index) in [("Expires", 2), ("Date", 3), ("Age", 4)] where fields.count > index {
        headers[name] = fields[index]
    }
    let requestValue = fields.count > 1 ? fields[1] : nil
    let now = Date(timeIntervalSinceReferenceDate: 800_000_000)
    let decision = HeaderParsing.cacheDecision(responseHeaders: headers, requestCacheControl: requestValue, now: now)
    require(
        decision == HeaderParsing.cacheDecision(responseHeaders: headers, requestCacheControl: requestValue, now: now),
        "deciding twice differs"
    )
    // The cache reads the request's `Cache-Control` from its `URLRequest`, which refuses a value holding CR or LF
    // (`setValue` leaves the field unset): the directives are those of the request as the cache gets it.
    var request = URLRequest(url: requestURL)
    request.setValue(requestValue, forHTTPHeaderField: "Cache-Control")
    let requestDirectives = HeaderParsing.cacheControlDirectives(
        request.value(forHTTPHeaderField: "Cache-Control") ?? ""
    )
    // A qualified `no-cache="field"` (RFC 9111 §5.2.2.4) only keeps its fields from a reuse: it does not make the
    // entry one that must be revalidated.
    let unqualifiedNoCache = directives["no-cache"]?.isEmpty == true
    require(
        decision.mustRevalidate == (directives["must-revalidate"] != nil || unqualifiedNoCache),
        "mustRevalidate does not follow must-revalidate and an unqualified no-cache"
    )
    if unqualifiedNoCache || requestDirectives["no-cache"] != nil {
        require(!decision.usableWithoutRevalidation, "no-cache entry used without revalidation")
    }
    if let maxAge = directives["max-age"].flatMap({ Int($0) }) {
        require(decision.freshnessLifetime == TimeInterval(maxAge), "lifetime is not max-age")
    } else if headers["Expires"] == nil {
        require(decision.freshnessLifetime == 0, "lifetime without max-age or Expires")
    }
    // A request's `max-stale` accepts a stale entry, even one without freshness (unless it must be revalidated).
    if decision.usableWithoutRevalidation {
        if requestDirectives["max-stale"] == nil {
            require(decision.freshnessLifetime > 0, "an entry without freshness used without revalidation")
        } else {
            require(directives["must-revalidate"] == nil, "a must-revalidate entry used stale for max-stale")
        }
    }
    return 0
}
