import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The suite's client checks (test-engine/client/test.mjs), ported: `checkResponse` and its body check on each
/// response as the client received it, `checkServerRequests` on what the origin recorded.
enum CacheTestChecks {
    /// A response as `fetch` exposes it: status, headers by case-insensitive name, body text.
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: String

        init(_ received: CacheTestLoad.Received) {
            self.status = received.response.statusCode
            var headers: [String: String] = [:]
            for case (let name as String, let value as String) in received.response.allHeaderFields {
                let key = name.lowercased()
                headers[key] = headers[key].map { $0 + ", " + value } ?? value
            }
            self.headers = headers
            self.body = String(decoding: received.body, as: UTF8.self)
        }

        func header(_ name: String) -> String? { self.headers[name.lowercased()] }
    }

    /// `checkResponse` and `checkResponseBody` for request `index` of `requests`.
    static func checkResponse(_ response: Response, requests: [CacheTestRequest], index: Int, uuid: String) throws {
        let number = index + 1
        let config = requests[index]
        let served = response.header("Server-Request-Count").flatMap(Self.parseInt)

        if let numbers = response.header("Request-Numbers") {
            let list = numbers.split(separator: " ").map(String.init)
            try CacheTestFailure.check(true, list.count == Set(list).count, "retry")
        }
        if let type = config.expectedType {
            let isSetup = config.isSetup("expected_type")
            if type == "cached", !(response.status == 304 && served == nil) {
                try CacheTestFailure.check(
                    isSetup,
                    served.map { $0 < number } ?? false,
                    "Response \(number) does not come from cache"
                )
            }
            if type == "not_cached" {
                try CacheTestFailure.check(isSetup, served == number, "Response \(number) comes from cache")
            }
        }

        if let expected = config["expected_status"] {
            if let status = expected.int {
                try CacheTestFailure.check(
                    config.isSetup("expected_status"),
                    response.status == status,
                    "Response \(number) status is \(response.status), not \(status)"
                )
            }
        } else if let status = config["response_status"]?.array?.first?.int {
            try CacheTestFailure.check(
                true,
                response.status == status,
                "Response \(number) status is \(response.status), not \(status)"
            )
        } else if response.status == 999 {
            try CacheTestFailure.check(
                config.isSetup("expected_type"),
                false,
                "Request \(number) should have been conditional, but it was not."
            )
        } else {
            try CacheTestFailure.check(
                true,
                response.status == 200,
                "Response \(number) status is \(response.status), not 200"
            )
        }

        try self.checkExpectedHeaders(response, config: config, number: number)
        try self.checkBody(response, config: config, uuid: uuid)
    }

    private static func checkExpectedHeaders(_ response: Response, config: CacheTestRequest, number: Int) throws {
        let isSetup = config.isSetup("expected_response_headers")
        for header in config["expected_response_headers"]?.array ?? [] {
            if let name = header.string {
                try CacheTestFailure.check(
                    isSetup,
                    response.header(name) != nil,
                    "Response \(number) \(name) header not present."
                )
            } else if let parts = header.array, parts.count > 2, let name = parts[0].string {
                try CacheTestFailure.check(
                    isSetup,
                    response.header(name) != nil,
                    "Response \(number) \(name) header not present."
                )
                let value = response.header(name)
                switch parts[1].string {
                case "=":
                    let other = response.header(parts[2].text)
                    try CacheTestFailure.check(
                        isSetup,
                        value == other,
                        "Response \(number) header \(name) is \(value ?? "null"), should match \(parts[2].text) (\(other ?? "null"))"
                    )
                case ">":
                    let bigger =
                        value.flatMap(Self.parseInt).map { Double($0) > (parts[2].number ?? .infinity) } ?? false
                    try CacheTestFailure.check(
                        isSetup,
                        bigger,
                        "Response \(number) header \(name) is \(value ?? "null"), should be bigger than \(parts[2].text)"
                    )
                default:
                    throw CacheTestFailure(
                        kind: "Error",
                        message: "Unknown expected-header operator '\(parts[1].text)'"
                    )
                }
            } else if let parts = header.array, parts.count == 2, let name = parts[0].string {
                let expected = CacheTestHeaderFixup.fixup(
                    name: name,
                    value: parts[1],
                    serverNow: response.header("Server-Now"),
                    baseURL: response.header("Server-Base-Url"),
                    request: config
                )
                let value = response.header(name)
                try CacheTestFailure.check(
                    isSetup,
                    expected.string != nil && value == expected.string,
                    "Response \(number) header \(name) is \"\(value ?? "null")\", not \"\(expected.text)\""
                )
            }
        }
        let isMissingSetup = config.isSetup("expected_response_headers_missing")
        for header in config["expected_response_headers_missing"]?.array ?? [] {
            // The suite's `[name, value]` form reads `response.headers[name]`, which a `fetch` Headers object does
            // not have: it never fails, in any published result. Kept as the suite has it.
            if let name = header.string {
                try CacheTestFailure.check(
                    isMissingSetup,
                    response.header(name) == nil,
                    "Response \(number) includes unexpected header \(name): \"\(response.header(name) ?? "")\""
                )
            }
        }
    }

    private static func checkBody(_ response: Response, config: CacheTestRequest, uuid: String) throws {
        if config["check_body"]?.bool == false { return }
        if let expected = config["expected_response_text"] {
            if let text = expected.string {
                try CacheTestFailure.check(
                    config.isSetup("expected_response_text"),
                    response.body == text,
                    "Response body is \"\(response.body)\", not \"\(text)\""
                )
            }
        } else if let body = config["response_body"], !body.isNull {
            try CacheTestFailure.check(
                true,
                response.body == body.text,
                "Response body is \"\(response.body)\", not \"\(body.text)\""
            )
        } else if ![204, 304].contains(response.status), config.method != "HEAD" {
            try CacheTestFailure.check(
                true,
                response.body == uuid,
                "Response body is \"\(response.body)\", not \"\(uuid)\""
            )
        }
    }

    /// JavaScript's `parseInt` (the leading integer of the text).
    static func parseInt(_ text: String) -> Int? {
        let trimmed = text.drop { $0 == " " || $0 == "\t" }
        let sign = trimmed.first == "-" || trimmed.first == "+" ? String(trimmed.prefix(1)) : ""
        let digits = trimmed.dropFirst(sign.count).prefix { $0.isASCII && $0.isNumber }
        return digits.isEmpty ? nil : Int(sign + digits)
    }
}
