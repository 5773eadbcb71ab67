import Foundation
import TetherConcurrency
import TetherHTTP

/// What ``CacheTestsOrigin`` remembers: each test's configuration (`PUT /config/{id}`) and, per test, one record of
/// every request that reached it (`GET /state/{id}`), as the suite's origin keeps them (`configs`, `stash`); and the
/// clock of each test that has one of its own (virtual time, shared with the test's cache).
final class CacheTestsOriginState: Sendable {
    private struct Stored {
        var configs: [String: [CacheTestRequest]] = [:]
        var stash: [String: [CacheTestJSON]] = [:]
        var clocks: [String: ManualHTTPCacheClock] = [:]
    }

    private let stored = LockedBox(Stored())

    /// Makes the origin read `clock` for the test `id`'s dates.
    func setClock(_ clock: ManualHTTPCacheClock, for id: String) {
        self.stored.withLock { $0.clocks[id] = clock }
    }

    /// The current time for the test `id`: its clock's, else the system's.
    func now(for id: String) -> Date {
        self.stored.withLock { $0.clocks[id] }?.now ?? Date()
    }

    /// The clock of the test `id`, if it has one.
    func clock(for id: String) -> ManualHTTPCacheClock? {
        self.stored.withLock { $0.clocks[id] }
    }

    /// Stores a test's configuration; false when one is already stored for `id`.
    func setConfig(_ requests: [CacheTestRequest], for id: String) -> Bool {
        self.stored.withLock { stored in
            guard stored.configs[id] == nil else { return false }
            stored.configs[id] = requests
            return true
        }
    }

    func config(for id: String) -> [CacheTestRequest]? { self.stored.withLock { $0.configs[id] } }

    /// Replaces request `index`'s `response_headers` with the values written on the wire: the suite's origin fixes
    /// them up in place, and a later request's validation compares against the fixed-up `Last-Modified` and `ETag`.
    func recordWrittenHeaders(_ headers: [CacheTestJSON], id: String, index: Int) {
        self.stored.withLock { stored in
            guard var requests = stored.configs[id], requests.indices.contains(index),
                case .object(var members) = requests[index].json
            else { return }
            members["response_headers"] = .array(headers)
            requests[index] = CacheTestRequest(.object(members))
            stored.configs[id] = requests
        }
    }

    func state(for id: String) -> [CacheTestJSON]? { self.stored.withLock { $0.stash[id] } }

    /// Appends the record of a request and returns the request numbers the test's records now hold.
    func append(_ record: CacheTestJSON, for id: String) -> [CacheTestJSON] {
        self.stored.withLock { stored in
            stored.stash[id, default: []].append(record)
            return stored.stash[id, default: []].map { $0["request_num"] ?? .null }
        }
    }
}
