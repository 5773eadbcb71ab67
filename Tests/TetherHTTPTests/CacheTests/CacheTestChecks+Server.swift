import Foundation

extension CacheTestChecks {
    /// `checkServerRequests`: the test's requests against what the origin recorded (`records`, one per request it
    /// saw), with the client's `responses` in request order.
    static func checkServerRequests(
        requests: [CacheTestRequest],
        responses: [Response],
        records: [CacheTestJSON]
    ) throws {
        var recordIndex = 0
        for (index, config) in requests.enumerated() {
            let number = index + 1
            let response = responses[index]
            let record = records.indices.contains(recordIndex) ? records[recordIndex] : nil
            let isSetup = config.isSetup("expected_type")
            var validators: [String] = []
            switch config.expectedType {
            case "cached": continue
            case "not_cached":
                let seen = try Self.member(record, "request_num")
                try CacheTestFailure.check(
                    isSetup,
                    seen.int == number,
                    "Response \(number) comes from cache (\(seen.text) on server)"
                )
            case "etag_validated": validators.append("if-none-match")
            case "lm_validated": validators.append("if-modified-since")
            default: break
            }
            recordIndex += 1
            for name in validators {
                try CacheTestFailure.check(isSetup, record != nil, "request \(number) wasn't sent to server")
                try CacheTestFailure.check(
                    isSetup,
                    record?["request_headers"]?[name] != nil,
                    "request \(number) doesn't have \(name) header"
                )
            }
            try self.checkRequestHeaders(config, record: record, number: number)
            if let record, let saved = record["response_headers"]?.array {
                for header in saved {
                    guard let parts = header.array, parts.count >= 2, let name = parts[0].string else { continue }
                    if name.lowercased() == "date" { continue }
                    let expected = parts[1].array.map { $0.map(\.text).joined(separator: ", ") } ?? parts[1].text
                    let received = response.header(name)
                    try CacheTestFailure.check(
                        true,
                        received == expected,
                        "Response \(number) header \(name) is \"\(received ?? "null")\", not \"\(expected)\""
                    )
                }
            }
            if let method = config["expected_method"]?.string {
                let seen = try Self.member(record, "request_method")
                try CacheTestFailure.check(
                    config.isSetup("expected_method"),
                    seen.string == method,
                    "Request \(number) had method \(seen.text), not \(method)"
                )
            }
        }
    }

    private static func checkRequestHeaders(_ config: CacheTestRequest, record: CacheTestJSON?, number: Int) throws {
        if let expected = config["expected_request_headers"]?.array {
            let isSetup = config.isSetup("expected_request_headers")
            let headers = try Self.member(record, "request_headers")
            for header in expected {
                if let name = header.string {
                    try CacheTestFailure.check(
                        isSetup,
                        headers[name.lowercased()] != nil,
                        "Request \(number) \(name) header not present."
                    )
                } else if let parts = header.array, parts.count >= 2, let name = parts[0].string {
                    let value = headers[name.lowercased()]
                    try CacheTestFailure.check(
                        isSetup,
                        value == parts[1],
                        "Request \(number) header \(name) is \"\(value?.text ?? "undefined")\", not \"\(parts[1].text)\""
                    )
                }
            }
        }
        if let missing = config["expected_request_headers_missing"]?.array {
            let isSetup = config.isSetup("expected_request_headers_missing")
            let headers = try Self.member(record, "request_headers")
            for header in missing {
                if let name = header.string {
                    try CacheTestFailure.check(
                        isSetup,
                        headers[name.lowercased()] == nil,
                        "Request \(number) \(name) header present."
                    )
                } else if let parts = header.array, parts.count >= 2, let name = parts[0].string {
                    let value = headers[name.lowercased()]
                    try CacheTestFailure.check(
                        isSetup,
                        value != parts[1],
                        "Request \(number) header \(name) is \"\(value?.text ?? "undefined")\""
                    )
                }
            }
        }
    }

    /// `record[name]`, failing as JavaScript does when the origin has no record for the request.
    private static func member(_ record: CacheTestJSON?, _ name: String) throws -> CacheTestJSON {
        guard let record else {
            throw CacheTestFailure(
                kind: "TypeError",
                message: "Cannot read properties of undefined (reading '\(name)')"
            )
        }
        return record[name] ?? .null
    }
}
