import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The POSIX file operations the file stores need, each turning a failure into a ``StoreError`` with the errno.
enum FileIO {
    /// The current errno as an error value.
    static func errnoError(_ code: Int32 = errno) -> POSIXError {
        POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
    }

    /// Opens `url` with `flags`, retrying on EINTR.
    static func open(_ url: URL, _ flags: Int32, mode: mode_t = 0o600) throws -> Int32 {
        while true {
            let fd = url.withUnsafeFileSystemRepresentation { path -> Int32 in
                guard let path else { return -1 }
                return Foundation.open(path, flags | O_CLOEXEC, mode)
            }
            if fd >= 0 { return fd }
            if errno == EINTR { continue }
            throw StoreError(code: .io, message: "cannot open file", url: url, underlying: errnoError())
        }
    }

    /// Creates `url` empty, readable and writable by its owner only, when no file is there; does nothing otherwise.
    /// For a database that another library opens: SQLite gives its journal files the database file's permissions.
    /// A failure is left for that library's own open to report.
    static func createPrivateIfAbsent(_ url: URL) {
        guard let fd = try? open(url, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600) else { return }
        close(fd)
    }

    /// Reads the whole file, or returns `nil` when it does not exist.
    static func readIfExists(_ url: URL) throws -> Data? {
        let fd: Int32
        do {
            fd = try open(url, O_RDONLY)
        } catch let error as StoreError {
            if let posix = error.underlying as? POSIXError, posix.code == .ENOENT { return nil }
            throw error
        }
        defer { close(fd) }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw StoreError(code: .io, message: "cannot read file", url: url, underlying: errnoError())
            }
            if count == 0 { break }
            data.append(contentsOf: chunk[0..<count])
        }
        return data
    }

    /// Writes all of `bytes` at `offset`.
    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int, url: URL) throws {
        var done = 0
        while done < bytes.count {
            let count = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if count < 0 {
                if errno == EINTR { continue }
                throw StoreError(code: .io, message: "cannot write file", url: url, underlying: errnoError())
            }
            done += count
        }
    }

    /// Flushes the file's data and metadata to the disk.
    static func sync(_ fd: Int32, url: URL) throws {
        while fsync(fd) != 0 {
            if errno == EINTR { continue }
            throw StoreError(code: .io, message: "fsync failed", url: url, underlying: errnoError())
        }
    }

    /// Flushes a directory, making a rename inside it durable.
    static func syncDirectory(_ directory: URL) throws {
        let fd = try open(directory, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        try sync(fd, url: directory)
    }

    /// Replaces `url` with `data` durably: write `<name>.<random>.tmp` in the same directory, fsync it, rename it over
    /// `url`, fsync the directory. On failure the old file is untouched and the temporary file removed.
    static func writeAtomically(_ data: Data, to url: URL) throws {
        let directory = url.deletingLastPathComponent()
        let random = String(UInt64.random(in: 0...UInt64.max), radix: 36)
        let temporary = directory.appendingPathComponent("\(url.lastPathComponent).\(random).tmp")
        let fd = try open(temporary, O_WRONLY | O_CREAT | O_EXCL)
        do {
            try data.withUnsafeBytes { try write(fd, $0, at: 0, url: temporary) }
            try sync(fd, url: temporary)
            close(fd)
        } catch {
            close(fd)
            unlink(temporary.path)
            throw error
        }
        if rename(temporary.path, url.path) != 0 {
            let error = errnoError()
            unlink(temporary.path)
            throw StoreError(code: .io, message: "cannot rename temporary file", url: url, underlying: error)
        }
        try syncDirectory(directory)
    }

    /// Removes `<name>.*.tmp` files that a write cut short left behind.
    static func removeLeftoverTemporaryFiles(for url: URL) {
        let directory = url.deletingLastPathComponent()
        let prefix = url.lastPathComponent + "."
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".tmp") {
            unlink(directory.appendingPathComponent(name).path)
        }
    }

    /// The size of an open file.
    static func size(_ fd: Int32, url: URL) throws -> Int {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw StoreError(code: .io, message: "cannot stat file", url: url, underlying: errnoError())
        }
        return Int(info.st_size)
    }

    /// Truncates an open file and syncs it.
    static func truncate(_ fd: Int32, to length: Int, url: URL) throws {
        guard ftruncate(fd, off_t(length)) == 0 else {
            throw StoreError(code: .io, message: "cannot truncate file", url: url, underlying: errnoError())
        }
        try sync(fd, url: url)
    }
}

/// An exclusive `flock` on `<store>.lock`, held for the lifetime of the object. `flock` locks belong to the open file
/// description, so a second instance in the same process is refused just like another process.
final class FileLock: Sendable {
    private let fd: Int32

    init(url: URL) throws {
        // `self.fd` is set only once the lock is held: a class whose stored properties are all set runs its deinit
        // when its init throws, and that deinit would close the descriptor a second time. Between the two closes
        // another thread may have been given the same number (a pipe, a socket), and lose it.
        let fd = try FileIO.open(url, O_RDWR | O_CREAT)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            close(fd)
            if code == EWOULDBLOCK {
                throw StoreError(
                    code: .locked,
                    message: "the store is open in another instance or process",
                    url: url,
                    underlying: FileIO.errnoError(code)
                )
            }
            throw StoreError(code: .io, message: "cannot lock file", url: url, underlying: FileIO.errnoError(code))
        }
        self.fd = fd
    }

    deinit {
        close(fd)
    }
}
