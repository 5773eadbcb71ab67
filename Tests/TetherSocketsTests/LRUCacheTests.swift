import Testing

@testable import TetherSockets

struct LRUCacheTests {
    @Test func theLeastRecentlyUsedEntryMakesRoom() {
        var cache = LRUCache<String, Int>(capacity: 3)
        cache.store(1, for: "a")
        cache.store(2, for: "b")
        cache.store(3, for: "c")
        #expect(cache.value(for: "a") == 1)  // "b" is now the least recently used
        cache.store(4, for: "d")
        #expect(cache.count == 3)
        #expect(!cache.contains("b"))
        #expect(cache.contains("a") && cache.contains("c") && cache.contains("d"))
    }

    @Test func replacingAKeyDropsNothing() {
        var cache = LRUCache<String, Int>(capacity: 2)
        cache.store(1, for: "a")
        cache.store(2, for: "b")
        cache.store(3, for: "a")
        #expect(cache.count == 2)
        #expect(cache.value(for: "a") == 3 && cache.value(for: "b") == 2)
    }

    @Test func aCapacityBelowOneKeepsOne() {
        var cache = LRUCache<Int, Int>(capacity: 0)
        cache.store(1, for: 1)
        cache.store(2, for: 2)
        #expect(cache.count == 1 && cache.value(for: 2) == 2)
    }
}
