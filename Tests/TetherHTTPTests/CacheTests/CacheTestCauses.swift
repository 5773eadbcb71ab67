/// Why Tether fails the tests it fails: one entry per cause, with the tests it explains. ``CacheTestReport`` groups
/// the failing tests of a run by these; a failing test that none names is listed as unexplained.
struct CacheTestCause: Sendable {
    var title: String
    var explanation: String
    var ids: [String]

    /// The causes, most tests first.
    static let all: [CacheTestCause] = [
        CacheTestCause(
            title: "No heuristic freshness",
            explanation: """
                A design choice of `HTTPResponseCache` (RFC 9111 §4.2.2 allows heuristics, does not require them): a \
                response without `max-age` or `Expires` is stored only if it has a validator, and then revalidated \
                each time. The browsers reuse such responses for a fraction of their `Last-Modified` age.
                """,
            ids: [
                "heuristic-200-cached", "heuristic-203-cached", "heuristic-204-cached", "heuristic-404-cached",
                "heuristic-405-cached", "heuristic-410-cached", "heuristic-414-cached", "heuristic-501-cached",
                "heuristic-599-cached", "heuristic-delta-5", "heuristic-delta-10", "heuristic-delta-30",
                "heuristic-delta-60", "heuristic-delta-300", "heuristic-delta-600", "heuristic-delta-1200",
                "heuristic-delta-1800", "heuristic-delta-3600", "heuristic-delta-43200", "heuristic-delta-86400",
                "other-heuristic-content-disposition-attachment", "pragma-response-no-cache-heuristic",
            ]
        ),
        CacheTestCause(
            title: "No range requests",
            explanation: """
                The cache neither stores `206 Partial Content` nor answers a `Range` request from a complete stored \
                response; a ranged request goes to the server.
                """,
            ids: [
                "partial-store-partial-reuse-partial", "partial-store-complete-reuse-partial",
                "partial-store-complete-reuse-partial-no-last", "partial-store-complete-reuse-partial-suffix",
                "partial-store-partial-reuse-partial-byterange", "partial-store-partial-reuse-partial-absent",
                "partial-store-partial-reuse-partial-suffix", "partial-store-partial-complete", "partial-use-headers",
                "partial-use-stored-headers",
            ]
        ),
        CacheTestCause(
            title: "Cache-Control and Age values read strictly",
            explanation: """
                Spaces around a directive's `=` are trimmed (`max-age =3600` is a `max-age`; the tests ask whether \
                it is ignored); a value must be integer delta-seconds (`3600.0`, `3600.5`, `a3600` and `3600a` are \
                not a `max-age`; the tests ask whether the response is reused anyway); a directive given twice \
                counts as first given (RFC 9111 §4.2.1 allows first or stale; Chrome and Safari also take the first, \
                so the tests that want the second fail); an `Age` with a parameter is invalid and ignored (RFC 9111 \
                §5.1). All are `check` tests: the suite asks, it does not require.
                """,
            ids: [
                "freshness-max-age-space-before-equals", "freshness-max-age-space-after-equals",
                "freshness-max-age-decimal-zero", "freshness-max-age-decimal-five", "freshness-max-age-a100",
                "freshness-max-age-100a", "freshness-max-age-two-stale-fresh-sameline",
                "freshness-max-age-two-stale-fresh-sepline", "age-parse-parameter", "age-parse-numeric-parameter",
            ]
        ),
        CacheTestCause(
            title: "One variant per URL, Vary values compared as sent",
            explanation: """
                The cache keeps one response per URL: a second variant replaces the first, and a request whose \
                `Vary`ing headers differ is a miss without the stored validators. Values are compared after \
                removing the whitespace around list commas, with no language negotiation (order, case, q-values).
                """,
            ids: [
                "vary-invalidate", "vary-normalise-lang-order", "vary-normalise-lang-case",
                "vary-normalise-lang-select", "conditional-etag-vary-headers-mismatch",
            ]
        ),
        CacheTestCause(
            title: "HEAD does not use or update the cache",
            explanation: """
                Only `GET` is looked up and stored: a `HEAD` goes to the server and its response does not refresh a \
                stored `GET` response.
                """,
            ids: ["head-200-retain", "head-200-freshness-update", "head-200-update", "head-410-update"]
        ),
        CacheTestCause(
            title: "A load fails instead of getting a made-up response",
            explanation: """
                With the origin gone and a stored response that must be revalidated, the suite wants a response \
                without the origin's headers (as a proxy's 504); `URLConnection` fails the load with the network \
                error, as `fetch` does in every browser. The request's `only-if-cached` directive is not read \
                either: the cache policy `returnCacheDataDontLoad` is NSURLConnection's way to say it.
                """,
            ids: ["stale-close-must-revalidate", "stale-close-no-cache", "ccreq-oic"]
        ),
        CacheTestCause(
            title: "No stale-if-error on a 5xx",
            explanation: """
                A stale entry is served when the network fails (the origin is unreachable or drops the connection), \
                not when the origin answers with a `5xx`.
                """,
            ids: ["stale-503", "stale-sie-503"]
        ),
        CacheTestCause(
            title: "No Warning headers",
            explanation: "`Warning` is obsoleted by RFC 9111; the cache does not add one to a stale response.",
            ids: ["stale-warning-stored", "stale-warning-become"]
        ),
        CacheTestCause(
            title: "Entity tags go out as given",
            explanation: """
                `If-None-Match` carries the stored `ETag` or the application's value unchanged; the cache does not \
                add quotes to an unquoted one.
                """,
            ids: ["conditional-etag-strong-generate-unquoted", "conditional-etag-forward-unquoted"]
        ),
        CacheTestCause(
            title: "Qualified no-cache is plain no-cache",
            explanation: """
                `no-cache="field"` makes the whole response need revalidation instead of allowing it without the \
                named fields (RFC 9111 §5.2.2.4 allows either).
                """,
            ids: [
                "headers-omit-headers-listed-in-Cache-Control-no-cache-single",
                "headers-omit-headers-listed-in-Cache-Control-no-cache",
            ]
        ),
        CacheTestCause(
            title: "Request directives read as NSURLCache reads them",
            explanation: """
                `Pragma: no-cache` in a request counts as `Cache-Control: no-cache` (RFC 9111 deprecates it; \
                NSURLCache honours it), and a request's `no-store` does not stop a stored response from being \
                used (RFC 9111 §5.2.1.5 allows it).
                """,
            ids: ["pragma-request-no-cache", "ccreq-no-store"]
        ),
        CacheTestCause(
            title: "Only GET responses are stored",
            explanation: """
                A `POST` response with `Content-Location` of its own URL and explicit freshness is not stored for \
                later `GET`s.
                """,
            ids: ["method-POST"]
        ),
        CacheTestCause(
            title: "immutable is not read",
            explanation: """
                A reload (`fetch`'s `no-cache`, here `reloadRevalidatingCacheData`) revalidates even a fresh \
                `immutable` response.
                """,
            ids: ["cc-resp-immutable-fresh"]
        ),
        CacheTestCause(
            title: "A 304 does not replace Content-Encoding",
            explanation: """
                The stored body is kept decoded as it arrived, so a `304`'s `Content-Encoding` (which would describe \
                a different body) is not taken over.
                """,
            ids: ["304-etag-update-response-Content-Encoding"]
        ),
        CacheTestCause(
            title: "Age only on cached responses",
            explanation: """
                A response that comes from the server gets no `Age`, however long it took; an `Age` is added to \
                every response served from the cache.
                """,
            ids: ["other-age-delay"]
        ),
    ]
}
