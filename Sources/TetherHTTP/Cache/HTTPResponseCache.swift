public import Foundation
import TetherConcurrency

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A response cache with the RFC 9111 basics, in memory and optionally on disk
/// (Linux's `URLCache` is never populated by HTTP loads).
///
/// ``URLConnection`` consults it according to each request's `cachePolicy`. Only `GET` responses with a
/// cacheable status and `max-age`, `Expires` or a validator, or with another final status and `max-age` or
/// `Expires`, are stored; `no-store` (without `must-understand`) and `Vary: *` never are, nor hop-by-hop fields.
/// `Vary` is matched against the request as it was sent, with the cookies and credential the load added.
///
/// A cache is shared (the default, and ``shared``): it may serve every configuration of the process, so it stores
/// no `private` response, no response that sets a cookie, and no response to a request that carried `Authorization`
/// (its own or a challenge's) or a `Cookie` header of its own unless the response says `public`, `s-maxage` or
/// `must-revalidate`. The cookies a load adds from `HTTPCookieStorage.shared` do not count: that storage is the
/// process's, the same for every load. A shared cache's freshness follows `s-maxage` and `proxy-revalidate`. A cache
/// made with `isPrivate: true` serves one user and stores those too (RFC 9111 §3.5).
///
/// Disk entries are written atomically, readable by their owner only (the folder Tether creates is 0700, each file
/// 0600), and found again by a later instance on the same directory.
///
/// ```swift
/// let cache = HTTPResponseCache(memoryCapacity: 1 << 20, diskCapacity: 32 << 20, directory: cacheURL)
/// let configuration = URLConnection.Configuration(responseCache: cache)
/// ```
public final class HTTPResponseCache: Sendable {
    /// The cache used by ``URLConnection/Configuration/default``: 4 MiB of memory, no disk.
    public static let shared = HTTPResponseCache()

    private struct MemoryState {
        var entries: [String: CacheEntry] = [:]
        var order: [String: UInt64] = [:]
        var clock: UInt64 = 0
        var usage = 0
    }

    private let state = LockedBox(MemoryState())
    /// Serialises the reads and writes of the disk files (it guards the directory; the box holds no value).
    private let disk = LockedBox(())
    private let directory: URL?

    /// The memory budget in bytes.
    public let memoryCapacity: Int
    /// The disk budget in bytes.
    public let diskCapacity: Int
    /// Whether the cache serves one user only (RFC 9111's private cache); false for a cache shared by every load of
    /// the process, which keeps no response for one user from another.
    public let isPrivate: Bool
    /// The keys whose background revalidation (`stale-while-revalidate`) is under way: one at a time per key.
    private let revalidating = LockedBox<Set<String>>([])

    /// Creates a cache.
    ///
    /// - Parameters:
    ///   - memoryCapacity: Bytes kept in memory (default 4 MiB).
    ///   - diskCapacity: Bytes kept on disk (default 0 = no disk).
    ///   - directory: The folder for disk entries; required when `diskCapacity > 0`. Created if missing, readable by
    ///     its owner only (0700); a folder that exists keeps its permissions.
    ///   - isPrivate: True for a cache that serves one user: it also stores `private` responses, responses that set
    ///     cookies and responses to requests with credentials. Default false (a shared cache).
    public init(memoryCapacity: Int = 4 << 20, diskCapacity: Int = 0, directory: URL? = nil, isPrivate: Bool = false) {
        precondition(memoryCapacity >= 0 && diskCapacity >= 0, "cache capacities must not be negative")
        precondition(diskCapacity == 0 || directory != nil, "a disk cache needs a directory")
        self.memoryCapacity = memoryCapacity
        self.diskCapacity = diskCapacity
        self.isPrivate = isPrivate
        self.directory = diskCapacity > 0 ? directory : nil
        if let directory = self.directory {
            try? FileManager.default.createDirectory(
                at: directory,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        }
    }

    /// Bytes currently held in memory.
    public var currentMemoryUsage: Int { self.state.withLock { $0.usage } }

    /// Bytes currently held on disk.
    public var currentDiskUsage: Int {
        self.disk.withLock { _ in self.diskFiles().reduce(0) { $0 + $1.size } }
    }

    /// The stored entry for `request` (fresh or not), or nil.
    ///
    /// - Parameter request: The request; its URL and the headers named by the entry's `Vary` must match.
    /// - Returns: The stored response and body.
    public func cachedResponse(for request: URLRequest) -> CachedURLResponse? {
        self.entry(for: request)?.makeCachedURLResponse()
    }

    /// Stores `cachedResponse` for `request`, if its response is an `HTTPURLResponse` that the rules allow.
    ///
    /// - Parameters:
    ///   - cachedResponse: The response and body to store.
    ///   - request: The request that produced it.
    public func storeCachedResponse(_ cachedResponse: CachedURLResponse, for request: URLRequest) {
        guard let response = cachedResponse.response as? HTTPURLResponse, let url = request.url ?? response.url
        else { return }
        guard cachedResponse.storagePolicy != .notAllowed else { return }
        var headers: [String: String] = [:]
        for case (let name as String, let value as String) in response.allHeaderFields {
            headers[name] = value
        }
        guard
            CacheRules.isStorable(
                request: request,
                statusCode: response.statusCode,
                headers: headers,
                isShared: !self.isPrivate
            )
        else { return }
        let now = Date()
        let entry = CacheEntry(
            url: url,
            statusCode: response.statusCode,
            headers: headers,
            body: cachedResponse.data,
            requestDate: now,
            responseDate: now,
            varyValues: CacheRules.varyValues(for: request, headers: headers),
            storagePolicy: Int(cachedResponse.storagePolicy.rawValue),
            httpVersion: response.httpVersion
        )
        self.store(entry, allowsDisk: cachedResponse.storagePolicy == .allowed)
    }

    /// Removes the entry for `request`'s URL.
    ///
    /// - Parameter request: The request whose entry goes.
    public func removeCachedResponse(for request: URLRequest) {
        guard let url = request.url else { return }
        self.remove(key: CacheRules.key(for: url))
    }

    /// Removes every entry, in memory and on disk.
    public func removeAllCachedResponses() {
        self.state.withLock { $0 = MemoryState() }
        self.disk.withLock { _ in
            for file in self.diskFiles() { try? FileManager.default.removeItem(at: file.url) }
        }
    }

    // MARK: - Internal API used by loads

    /// The Vary-matched entry, from memory or disk (a corrupt disk entry is deleted and reported as a miss).
    ///
    /// - Parameter asSent: Makes the request as it would be sent (with the headers the load adds), against which
    ///   `Vary` is matched; called only for an entry that has a `Vary`.
    func entry(for request: URLRequest, asSent: (URLRequest) -> URLRequest = { $0 }) -> CacheEntry? {
        guard let url = request.url else { return nil }
        let key = CacheRules.key(for: url)
        let entry =
            self.state.withLock { state -> CacheEntry? in
                guard let entry = state.entries[key] else { return nil }
                state.clock += 1
                state.order[key] = state.clock
                return entry
            } ?? self.readFromDisk(key: key)
        guard let entry else { return nil }
        if CacheRules.varyNames(entry.headers).isEmpty { return entry }
        return CacheRules.matchesVary(entry, request: asSent(request)) ? entry : nil
    }

    /// Claims the background revalidation of `key`: false when one is already under way.
    func beginRevalidation(key: String) -> Bool {
        self.revalidating.withLock { $0.insert(key).inserted }
    }

    /// Ends the background revalidation of `key`.
    func endRevalidation(key: String) {
        _ = self.revalidating.withLock { $0.remove(key) }
    }

    /// True when entries are also written to disk.
    var hasDisk: Bool { self.directory != nil }

    func store(_ entry: CacheEntry, allowsDisk: Bool = true) {
        var entry = entry
        entry.headers = CacheRules.storedHeaders(entry.headers)
        entry.isInSharedCache = !self.isPrivate
        let key = CacheRules.key(for: entry.url)
        let cost = entry.cost
        self.state.withLock { state in
            if let old = state.entries.removeValue(forKey: key) {
                state.usage -= old.cost
                state.order.removeValue(forKey: key)
            }
            guard cost <= self.memoryCapacity else { return }
            state.clock += 1
            state.entries[key] = entry
            state.order[key] = state.clock
            state.usage += cost
            while state.usage > self.memoryCapacity,
                let oldest = state.order.min(by: { $0.value < $1.value })?.key
            {
                if let removed = state.entries.removeValue(forKey: oldest) { state.usage -= removed.cost }
                state.order.removeValue(forKey: oldest)
            }
        }
        if allowsDisk {
            self.writeToDisk(entry, key: key)
        } else {
            self.removeFromDisk(key: key)
        }
    }

    func remove(key: String) {
        self.state.withLock { state in
            if let old = state.entries.removeValue(forKey: key) { state.usage -= old.cost }
            state.order.removeValue(forKey: key)
        }
        self.removeFromDisk(key: key)
    }

    /// The largest body worth buffering while a response streams by (5% of the larger budget, as URLCache).
    var maximumEntrySize: Int { max(self.memoryCapacity, self.diskCapacity) / 20 }

    // MARK: - Disk

    private func fileURL(key: String) -> URL? {
        self.directory?.appendingPathComponent(Digests.hex(Digests.sha256(Array(key.utf8))) + ".tethercache")
    }

    private func diskFiles() -> [(url: URL, size: Int, date: Date)] {
        guard let directory = self.directory,
            let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path)
        else { return [] }
        return names.filter { $0.hasSuffix(".tethercache") }.compactMap { name in
            let url = directory.appendingPathComponent(name)
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path) else { return nil }
            let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
            let date = attributes[.modificationDate] as? Date ?? .distantPast
            return (url, size, date)
        }
    }

    private func writeToDisk(_ entry: CacheEntry, key: String) {
        guard let url = self.fileURL(key: key) else { return }
        self.disk.withLock { _ in
            guard let encoded = try? JSONEncoder().encode(entry), encoded.count <= self.diskCapacity else {
                try? FileManager.default.removeItem(at: url)
                return
            }
            Self.writeOwnerOnly(encoded, to: url)
            var files = self.diskFiles().sorted { $0.date < $1.date }
            var usage = files.reduce(0) { $0 + $1.size }
            while usage > self.diskCapacity, !files.isEmpty {
                let oldest = files.removeFirst()
                if oldest.url == url && !files.isEmpty {
                    files.append(oldest)
                    continue
                }
                try? FileManager.default.removeItem(at: oldest.url)
                usage -= oldest.size
            }
        }
    }

    /// Writes `data` to `url` atomically (a temporary file renamed over it), the file readable by its owner only
    /// (0600) from the moment it exists; a failure leaves no file.
    private static func writeOwnerOnly(_ data: Data, to url: URL) {
        let temporary = url.path + ".\(UUID().uuidString).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        var written = 0
        let complete = data.withUnsafeBytes { bytes -> Bool in
            while written < bytes.count {
                let result = write(fd, bytes.baseAddress! + written, bytes.count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                written += result
            }
            return true
        }
        close(fd)
        if !complete || rename(temporary, url.path) != 0 { unlink(temporary) }
    }

    private func readFromDisk(key: String) -> CacheEntry? {
        guard let url = self.fileURL(key: key) else { return nil }
        return self.disk.withLock { _ in
            guard let data = try? Data(contentsOf: url) else { return nil }
            guard let entry = try? JSONDecoder().decode(CacheEntry.self, from: data),
                CacheRules.key(for: entry.url) == key
            else {
                try? FileManager.default.removeItem(at: url)
                return nil
            }
            return entry
        }
    }

    private func removeFromDisk(key: String) {
        guard let url = self.fileURL(key: key) else { return }
        self.disk.withLock { _ in _ = try? FileManager.default.removeItem(at: url) }
    }
}
