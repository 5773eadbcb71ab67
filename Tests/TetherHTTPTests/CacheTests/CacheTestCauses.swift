/// Why Tether fails the tests it fails: one entry per cause, with the tests it explains. ``CacheTestReport`` groups
/// the failing tests of a run by these; a failing test that none names is listed as unexplained.
struct CacheTestCause: Sendable {
    var title: String
    var explanation: String
    var ids: [String]

    /// The causes, most tests first.
    static let all: [CacheTestCause] = [
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
            title: "Partial responses without a strong validator are not stored",
            explanation: """
                A `206` is stored when its `Content-Range` names one range of a known length, its body is exactly \
                that range, and it has a strong validator (an `ETag` that is not weak, or a `Last-Modified` at least \
                a second before its `Date`). A stored part answers the ranges it holds; a request for the whole \
                asks for the rest with `If-Range` and combines the two; two parts of one representation that meet \
                or overlap are combined (RFC 9111 §3.3, §3.4); and a complete stored response answers any single \
                range. The suite's partial responses have no validator, so no part of them could ever be \
                completed or combined (RFC 9111 §3.4 needs a strong validator to prove that two parts are one \
                representation): `partial-store-partial-complete`, which wants the rest asked for, would get a rest \
                that cannot be used and a second request for the whole; Tether asks for the whole at once. The four \
                `reuse-partial` tests only reuse the part, but their part is malformed: `Content-Range: bytes \
                4-9/10` names six bytes over a five-byte body, and the tests read its bytes as `4-8` (`bytes=6-8` \
                is `234`) and as `5-9` (`bytes=-5` is `01234`) at once, so a cache that stores it serves wrong \
                bytes to some of them.
                """,
            ids: [
                "partial-store-partial-reuse-partial", "partial-store-partial-reuse-partial-byterange",
                "partial-store-partial-reuse-partial-absent", "partial-store-partial-reuse-partial-suffix",
                "partial-store-partial-complete",
            ]
        ),
        CacheTestCause(
            title: "Heuristic freshness is 10 % of the unchanged time",
            explanation: """
                A response without `max-age` or `Expires` is fresh for 10 % of the time between its `Last-Modified` \
                and its `Date` (at most a week), as the browsers compute it: one modified 5, 10 or 30 seconds \
                before is fresh for 0.5, 1 or 3 seconds, and the suite asks for it again after 3.
                """,
            ids: ["heuristic-delta-5", "heuristic-delta-10", "heuristic-delta-30"]
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
            title: "No Warning headers",
            explanation: "`Warning` is obsoleted by RFC 9111; the cache does not add one to a stale response.",
            ids: ["stale-warning-stored", "stale-warning-become"]
        ),
        CacheTestCause(
            title: "Entity tags go out as given",
            explanation: """
                `If-None-Match` carries the stored `ETag` or the application's value unchanged; the cache does not \
                add quotes to an unquoted one (a server that sends unquoted tags compares them as it sent them).
                """,
            ids: ["conditional-etag-strong-generate-unquoted", "conditional-etag-forward-unquoted"]
        ),
        CacheTestCause(
            title: "A stale response stands in for a server error only when allowed",
            explanation: """
                A `5xx` is answered with the stale stored response only within its `stale-if-error` window (RFC \
                5861); without one, RFC 9111 §4.2.4 forbids serving a stale response while the origin answers.
                """,
            ids: ["stale-503"]
        ),
        CacheTestCause(
            title: "Only a 200 to a HEAD updates the stored response",
            explanation: """
                A `200` to a `HEAD` freshens the stored `GET` response it describes (RFC 9111 §4.3.5); another \
                status, such as a `410`, describes no stored response and leaves it as it is.
                """,
            ids: ["head-410-update"]
        ),
        CacheTestCause(
            title: "Pragma: no-cache in a request is read",
            explanation: """
                `Pragma: no-cache` in a request counts as `Cache-Control: no-cache` (RFC 9111 deprecates it; \
                NSURLCache honours it, and an application that sends it means it).
                """,
            ids: ["pragma-request-no-cache"]
        ),
        CacheTestCause(
            title: "Age only on cached responses",
            explanation: """
                A response that comes from the server gets no `Age`, however long it took (an `Age` says that the \
                response was not made by the origin for this request, RFC 9111 §5.1); an `Age` is added to every \
                response served from the cache.
                """,
            ids: ["other-age-delay"]
        ),
    ]
}
