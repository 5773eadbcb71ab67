import Foundation
import TetherConcurrency

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The disk half of ``HTTPResponseCache``: one file per URL holding its variants that may go to disk, written
/// atomically and readable by its owner only.
extension HTTPResponseCache {
    func fileURL(key: String) -> URL? {
        self.directory?.appendingPathComponent(Digests.hex(Digests.sha256(Array(key.utf8))) + ".tethercache")
    }

    func diskFiles() -> [(url: URL, size: Int, date: Date)] {
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

    /// Writes the variants of `key` to its file, then removes the least recently written files over the budget.
    func writeToDisk(_ variants: [CacheEntry], key: String) {
        guard let url = self.fileURL(key: key) else { return }
        self.disk.withLock { _ in
            guard let encoded = try? JSONEncoder().encode(variants), encoded.count <= self.diskCapacity else {
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

    /// The variants of `key` in its file, or nil; a file that cannot be read as variants of `key` (an entry of
    /// an earlier version is one variant) is deleted.
    func readFromDisk(key: String) -> [CacheEntry]? {
        guard let url = self.fileURL(key: key) else { return nil }
        return self.disk.withLock { _ in
            guard let data = try? Data(contentsOf: url) else { return nil }
            let decoder = JSONDecoder()
            guard
                let variants = (try? decoder.decode([CacheEntry].self, from: data))
                    ?? (try? decoder.decode(CacheEntry.self, from: data)).map({ [$0] }),
                !variants.isEmpty, variants.allSatisfy({ CacheRules.key(for: $0.url) == key })
            else {
                try? FileManager.default.removeItem(at: url)
                return nil
            }
            return variants
        }
    }

    func removeFromDisk(key: String) {
        guard let url = self.fileURL(key: key) else { return }
        self.disk.withLock { _ in _ = try? FileManager.default.removeItem(at: url) }
    }
}
