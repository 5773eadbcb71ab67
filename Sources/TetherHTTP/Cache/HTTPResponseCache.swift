public import Foundation
import TetherConcurrency

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A response cache with the RFC 9111 basics, in memory and optionally on disk
/// (Linux's `URLCache` is never populated by HTTP loads).
///
/// ``URLConnection`` consults it according to each request's `cachePolicy`. `GET` responses with a cacheable
/// status and `max-age`, `Expires` or a validator, or with another final status and `max-age`, `Expires` or `public`
/// and a validator, are stored (and a `POST`'s with explicit freshness and a `Content-Location` of its own URL);
/// `no-store` (without `must-understand`) and `Vary: *` never are, nor hop-by-hop fields. A URL keeps up to eight
/// variants; `Vary` is matched against the request as it was sent, with the cookies and credential the load added.
/// A response without `max-age` or `Expires` is fresh on a heuristic (10 % of its `Last-Modified` age, at most a
/// week) unless ``URLConnection/Configuration/usesHeuristicFreshness`` is off. Times come from ``clock``.
///
/// A partial response (`206`) with one byte `Content-Range` of a known length and a strong validator is stored too,
/// when the whole representation would fit: it answers the byte ranges it holds, a request for the whole asks for
/// the rest with `If-Range` and is answered with the two combined, and two parts of one representation that meet are
/// combined when the second arrives (RFC 9111 §3.3, §3.4). ``cachedResponse(for:)`` returns such a part as the `206`
/// it is.
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
        /// Each URL's variants, oldest first.
        var entries: [String: [CacheEntry]] = [:]
        var order: [String: UInt64] = [:]
        var clock: UInt64 = 0
        var usage = 0
    }

    private let state = LockedBox(MemoryState())
    /// Serialises the reads and writes of the disk files (it guards the directory; the box holds no value).
    let disk = LockedBox(())
    let directory: URL?

    /// The memory budget in bytes.
    public let memoryCapacity: Int
    /// The disk budget in bytes.
    public let diskCapacity: Int
    /// Whether the cache serves one user only (RFC 9111's private cache); false for a cache shared by every load of
    /// the process, which keeps no response for one user from another.
    public let isPrivate: Bool
    /// The clock the cache and the loads that use it read: when responses were requested and received, and how old
    /// an entry is.
    public let clock: any HTTPCacheClock
    /// The keys whose background revalidation (`stale-while-revalidate`) is under way (one at a time per key), and
    /// who waits for none to be.
    private let revalidating = LockedBox(BackgroundRevalidations())

    /// Creates a cache.
    ///
    /// - Parameters:
    ///   - memoryCapacity: Bytes kept in memory (default 4 MiB).
    ///   - diskCapacity: Bytes kept on disk (default 0 = no disk).
    ///   - directory: The folder for disk entries; required when `diskCapacity > 0`. Created if missing, readable by
    ///     its owner only (0700); a folder that exists keeps its permissions.
    ///   - isPrivate: True for a cache that serves one user: it also stores `private` responses, responses that set
    ///     cookies and responses to requests with credentials. Default false (a shared cache).
    ///   - clock: The wall clock for the times of responses and the age of entries; default the system's. A test
    ///     gives a ``ManualHTTPCacheClock`` to make time pass without waiting.
    public init(
        memoryCapacity: Int = 4 << 20,
        diskCapacity: Int = 0,
        directory: URL? = nil,
        isPrivate: Bool = false,
        clock: any HTTPCacheClock = SystemHTTPCacheClock()
    ) {
        precondition(memoryCapacity >= 0 && diskCapacity >= 0, "cache capacities must not be negative")
        precondition(diskCapacity == 0 || directory != nil, "a disk cache needs a directory")
        self.memoryCapacity = memoryCapacity
        self.diskCapacity = diskCapacity
        self.isPrivate = isPrivate
        self.clock = clock
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
        let now = self.clock.now
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
        self.store(entry)
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

    /// The Vary-matched entry, from memory or disk (a corrupt disk entry is deleted and reported as a miss): of the
    /// URL's stored variants, the most recent one that `request` selects.
    ///
    /// - Parameter asSent: Makes the request as it would be sent (with the headers the load adds), against which
    ///   `Vary` is matched; called only for an entry that has a `Vary`.
    func entry(for request: URLRequest, asSent: (URLRequest) -> URLRequest = { $0 }) -> CacheEntry? {
        let variants = self.variants(for: request)
        guard variants.contains(where: { !CacheRules.varyNames($0.headers).isEmpty }) else { return variants.last }
        let sent = asSent(request)
        return variants.last { CacheRules.matchesVary($0, request: sent) }
    }

    /// Every stored variant of `request`'s URL, oldest first, whatever their `Vary` says.
    func variants(for request: URLRequest) -> [CacheEntry] {
        guard let url = request.url else { return [] }
        let key = CacheRules.key(for: url)
        return self.state.withLock { state -> [CacheEntry]? in
            guard let variants = state.entries[key] else { return nil }
            state.clock += 1
            state.order[key] = state.clock
            return variants
        } ?? self.readFromDisk(key: key) ?? []
    }

    /// Claims the background revalidation of `key`: false when one is already under way.
    func beginRevalidation(key: String) -> Bool {
        self.revalidating.withLock { $0.keys.insert(key).inserted }
    }

    /// Ends the background revalidation of `key`.
    func endRevalidation(key: String) {
        let waiters = self.revalidating.withLock { $0.end(key) }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns when no background revalidation is under way (at once if none is).
    func backgroundRevalidationsEnded() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isIdle = self.revalidating.withLock { state -> Bool in
                guard !state.keys.isEmpty else { return true }
                state.waiters.append(continuation)
                return false
            }
            if isIdle { continuation.resume() }
        }
    }

    /// True when entries are also written to disk.
    var hasDisk: Bool { self.directory != nil }

    /// The most variants kept per URL: a response that varies on a field with many values (`User-Agent`) does not
    /// fill the cache with one URL.
    static let maximumVariants = 8

    /// Stores `entry` as a variant of its URL, in memory and, when its storage policy allows, on disk. It replaces
    /// the variants it may stand for (``CacheRules/isOtherVariant(_:than:)``); the oldest go beyond
    /// ``maximumVariants``. A partial response (`206`) is kept only when its body is the range it names and the
    /// whole representation would fit in ``maximumEntrySize``; it is combined with the stored response it would
    /// replace when both have the same strong validator (``CacheRules/combine(_:with:)``).
    func store(_ entry: CacheEntry) {
        var entry = CacheRules.completed(entry)
        if entry.statusCode == 206 {
            guard let length = StoredPart(entry)?.length, length <= self.maximumEntrySize else { return }
        }
        entry.headers = CacheRules.storedHeaders(entry.headers)
        entry.isInSharedCache = !self.isPrivate
        let key = CacheRules.key(for: entry.url)
        let previous =
            self.state.withLock { $0.entries[key] } ?? self.readFromDisk(key: key) ?? []
        if entry.statusCode == 206,
            let replaced = previous.last(where: { !CacheRules.isOtherVariant(entry, than: $0) }),
            let combined = CacheRules.combine(replaced, with: entry)
        {
            entry = combined
            entry.isInSharedCache = !self.isPrivate
        }
        var variants = previous.filter { CacheRules.isOtherVariant(entry, than: $0) } + [entry]
        variants.removeFirst(max(0, variants.count - Self.maximumVariants))
        let cost = variants.reduce(0) { $0 + $1.cost }
        self.state.withLock { state in
            if let old = state.entries.removeValue(forKey: key) {
                state.usage -= old.reduce(0) { $0 + $1.cost }
                state.order.removeValue(forKey: key)
            }
            guard cost <= self.memoryCapacity else { return }
            state.clock += 1
            state.entries[key] = variants
            state.order[key] = state.clock
            state.usage += cost
            while state.usage > self.memoryCapacity,
                let oldest = state.order.min(by: { $0.value < $1.value })?.key
            {
                if let removed = state.entries.removeValue(forKey: oldest) {
                    state.usage -= removed.reduce(0) { $0 + $1.cost }
                }
                state.order.removeValue(forKey: oldest)
            }
        }
        let onDisk = variants.filter { $0.storagePolicy == Int(URLCache.StoragePolicy.allowed.rawValue) }
        if onDisk.isEmpty {
            self.removeFromDisk(key: key)
        } else {
            self.writeToDisk(onDisk, key: key)
        }
    }

    func remove(key: String) {
        self.state.withLock { state in
            if let old = state.entries.removeValue(forKey: key) { state.usage -= old.reduce(0) { $0 + $1.cost } }
            state.order.removeValue(forKey: key)
        }
        self.removeFromDisk(key: key)
    }

    /// The largest body worth buffering while a response streams by (5% of the larger budget, as URLCache).
    var maximumEntrySize: Int { max(self.memoryCapacity, self.diskCapacity) / 20 }
}
