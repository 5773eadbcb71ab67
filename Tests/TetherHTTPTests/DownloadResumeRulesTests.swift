import Foundation
import Testing

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `DownloadResumeRules`: what a download does with each response to a fresh download or a resumption, without I/O.
struct DownloadResumeRulesTests {
    typealias Decision = DownloadResumeRules.Decision

    static let attempt = DownloadResumeRules.Attempt(
        offset: 100,
        validator: .entityTag("\"v1\""),
        expectedLength: 1000
    )

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var status: Int
        var headers: [String: String]
        var resuming: Bool
        var expected: Decision

        var testDescription: String { self.name }
    }

    static let cases: [Case] = [
        Case(
            name: "a fresh 200 starts the file",
            status: 200,
            headers: ["Content-Length": "5"],
            resuming: false,
            expected: .writeFromStart(expectedLength: 5)
        ),
        Case(
            name: "a fresh 404 is refused",
            status: 404,
            headers: [:],
            resuming: false,
            expected: .reject(status: 404)
        ),
        Case(
            name: "a 206 from the offset with the same tag appends",
            status: 206,
            headers: ["Content-Range": "bytes 100-999/1000", "Content-Length": "900", "ETag": "\"v1\""],
            resuming: true,
            expected: .append(offset: 100, expectedLength: 1000)
        ),
        Case(
            name: "a 206 without a total keeps the known length",
            status: 206,
            headers: ["content-range": "bytes 100-999/*"],
            resuming: true,
            expected: .append(offset: 100, expectedLength: 1000)
        ),
        Case(
            name: "a 206 from another byte restarts",
            status: 206,
            headers: ["Content-Range": "bytes 101-999/1000"],
            resuming: true,
            expected: .restart(reason: "the 206 response starts at byte 101, not 100")
        ),
        Case(
            name: "a 206 with another total restarts",
            status: 206,
            headers: ["Content-Range": "bytes 100-1099/1100"],
            resuming: true,
            expected: .restart(reason: "the resource is 1100 bytes long now, not 1000")
        ),
        Case(
            name: "a 206 of another version restarts",
            status: 206,
            headers: ["Content-Range": "bytes 100-999/1000", "ETag": "\"v2\""],
            resuming: true,
            expected: .restart(reason: "the resource changed (\"v2\")")
        ),
        Case(
            name: "a 206 without Content-Range restarts",
            status: 206,
            headers: [:],
            resuming: true,
            expected: .restart(reason: "the 206 response has no byte Content-Range")
        ),
        Case(
            name: "a 206 whose length disagrees with its range restarts",
            status: 206,
            headers: ["Content-Range": "bytes 100-999/1000", "Content-Length": "10"],
            resuming: true,
            expected: .restart(reason: "the 206 response's Content-Length does not match its Content-Range")
        ),
        Case(
            name: "an encoded 206 restarts",
            status: 206,
            headers: ["Content-Range": "bytes 100-999/1000", "Content-Encoding": "gzip"],
            resuming: true,
            expected: .restart(reason: "the 206 response is encoded (gzip)")
        ),
        Case(
            name: "a 416 restarts",
            status: 416,
            headers: ["Content-Range": "bytes */50"],
            resuming: true,
            expected: .restart(reason: "the server cannot serve bytes from 100 on (416)")
        ),
        Case(
            name: "a 200 to a resumption starts over",
            status: 200,
            headers: ["Content-Length": "7"],
            resuming: true,
            expected: .writeFromStart(expectedLength: 7)
        ),
        Case(
            name: "a 500 to a resumption is refused",
            status: 500,
            headers: [:],
            resuming: true,
            expected: .reject(status: 500)
        ),
    ]

    @Test(arguments: Self.cases)
    func eachResponseHasOneDecision(_ example: Case) {
        let decision = DownloadResumeRules.decide(
            status: example.status,
            headers: example.headers,
            attempt: example.resuming ? Self.attempt : nil
        )
        #expect(decision == example.expected)
    }

    @Test func theValidatorIsAStrongTagElseTheModificationDate() {
        let date = "Sun, 06 Dec 2026 06:00:00 GMT"
        #expect(
            DownloadResumeRules.validator(in: ["ETag": "\"a\"", "Last-Modified": date]).validator == .entityTag("\"a\"")
        )
        #expect(
            DownloadResumeRules.validator(in: ["etag": "W/\"a\"", "Last-Modified": date]).validator
                == .lastModified(date)
        )
        #expect(DownloadResumeRules.validator(in: ["Last-Modified": date]).validator == .lastModified(date))
    }

    @Test func aWeakMissingOrEncodedValidatorIsNoneAndSaysWhy() {
        let weak = DownloadResumeRules.validator(in: ["ETag": "W/\"a\""])
        #expect(weak.validator == nil)
        #expect(weak.reason?.contains("weak") == true)
        let none = DownloadResumeRules.validator(in: [:])
        #expect(none.validator == nil)
        #expect(none.reason == "the response has no strong ETag and no Last-Modified")
        let encoded = DownloadResumeRules.validator(in: ["ETag": "\"a\"", "Content-Encoding": "gzip"])
        #expect(encoded.validator == nil)
        #expect(encoded.reason?.contains("encoded") == true)
        #expect(DownloadResumeRules.validator(in: ["Last-Modified": "yesterday"]).validator == nil)
    }

    @Test(arguments: [
        ("bytes 0-9/10", "0 9 10"), ("bytes 5-9/*", "5 9 -"), ("Bytes 1-1/2", "1 1 2"), ("bytes 9-5/10", "nil"),
        ("bytes 0-9/9", "nil"), ("bytes */10", "nil"), ("items 0-9/10", "nil"), ("bytes 0-9", "nil"),
        ("bytes -1-9/10", "nil"), ("bytes a-9/10", "nil"),
    ])
    func contentRangeIsParsedOrRefused(_ value: String, _ expected: String) {
        let parsed = DownloadResumeRules.contentRange(value).map {
            "\($0.first) \($0.last) \($0.total.map(String.init) ?? "-")"
        }
        #expect((parsed ?? "nil") == expected)
    }

    @Test func resumingAsksForTheRestIfTheVersionIsTheSame() {
        var request = URLRequest(url: URL(string: "http://example.test/file")!)
        request.setValue("yes", forHTTPHeaderField: "X-Kept")
        let outgoing = URLConnection.outgoing(request, resuming: Self.attempt)
        #expect(outgoing.value(forHTTPHeaderField: "Range") == "bytes=100-")
        #expect(outgoing.value(forHTTPHeaderField: "If-Range") == "\"v1\"")
        #expect(outgoing.value(forHTTPHeaderField: "Accept-Encoding") == "identity")
        #expect(outgoing.value(forHTTPHeaderField: "X-Kept") == "yes")
        #expect(URLConnection.outgoing(request, resuming: nil) == request)
    }

    @Test func resumeDataSurvivesJSON() throws {
        let data = DownloadResumeData(
            url: URL(string: "http://example.test/file")!,
            validator: .lastModified("Sun, 06 Dec 2026 06:00:00 GMT"),
            bytesReceived: 42,
            expectedLength: nil,
            partialFile: URL(fileURLWithPath: "/tmp/.file.tether-x.download")
        )
        let decoded = try JSONDecoder().decode(DownloadResumeData.self, from: JSONEncoder().encode(data))
        #expect(decoded == data)
    }
}
