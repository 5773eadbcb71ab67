public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The folders an app keeps its files in, the way the iOS sandbox names them.
///
/// On Linux they follow the XDG Base Directory specification, with the app's own folder appended:
///
/// | folder | Linux | iOS sandbox |
/// |---|---|---|
/// | `documents` | `$XDG_DATA_HOME/<app>/Documents` (`~/.local/share`) | `Documents` |
/// | `library` | `$XDG_DATA_HOME/<app>/Library` | `Library` |
/// | `preferences` | `$XDG_CONFIG_HOME/<app>` (`~/.config`) | `Library/Preferences` |
/// | `caches` | `$XDG_CACHE_HOME/<app>` (`~/.cache`) | `Library/Caches` |
/// | `temporary` | `${TMPDIR:-/tmp}/<app>-<uid>` | `tmp` |
///
/// On macOS each folder gets a trailing `<app>` component. XDG values that are empty or not absolute are ignored.
/// Nothing is created by `init`; call ``createDirectories()``.
public struct AppDirectories: Sendable, Hashable {
    /// The app's name, the last component of its folders.
    public let appName: String
    /// Where user documents live (the seed's `NSDocumentDirectory`).
    public let documents: URL
    /// The app's private library folder.
    public let library: URL
    /// Where settings live.
    public let preferences: URL
    /// Where re-creatable files live.
    public let caches: URL
    /// Where temporary files live.
    public let temporary: URL

    /// Creates the folders for `appName` from the process environment and the home directory.
    ///
    /// On Linux the home directory is `$HOME` when it is set to an absolute path (as the XDG rules and every shell
    /// tool read it, so `HOME=/some/dir tether notes add x` writes under `/some/dir`), and the password database's
    /// entry for the user otherwise.
    /// - Parameter appName: The app's folder name.
    /// - Throws: ``StoreError/Code/invalidArgument`` when `appName` is empty, `.`, `..` or contains `/`.
    public init(appName: String) throws {
        #if os(Linux) || os(Android) || os(FreeBSD) || os(OpenBSD)
        let environment = ProcessInfo.processInfo.environment
        try self.init(appName: appName, environment: environment, homeDirectory: Self.homeDirectory(environment))
        #else
        try Self.validate(appName)
        let fileManager = FileManager.default
        func folder(_ directory: FileManager.SearchPathDirectory) -> URL {
            fileManager.urls(for: directory, in: .userDomainMask).first ?? fileManager.temporaryDirectory
        }
        #if os(macOS)
        let suffix: String? = appName
        #else
        let suffix: String? = nil
        #endif
        func scoped(_ url: URL) -> URL {
            if let suffix { return url.appendingPathComponent(suffix, isDirectory: true) }
            return url
        }
        let library = folder(.libraryDirectory)
        self.appName = appName
        self.documents = scoped(folder(.documentDirectory))
        self.library = scoped(library)
        self.preferences = scoped(library.appendingPathComponent("Preferences", isDirectory: true))
        self.caches = scoped(folder(.cachesDirectory))
        self.temporary = scoped(fileManager.temporaryDirectory)
        #endif
    }

    /// Creates the folders for `appName` by the Linux (XDG) rules from the given environment and home directory.
    /// - Parameters:
    ///   - appName: The app's folder name.
    ///   - environment: The variables to read (`XDG_DATA_HOME`, `XDG_CONFIG_HOME`, `XDG_CACHE_HOME`, `TMPDIR`).
    ///   - homeDirectory: The user's home directory.
    /// - Throws: ``StoreError/Code/invalidArgument`` when `appName` is empty, `.`, `..` or contains `/`.
    public init(appName: String, environment: [String: String], homeDirectory: URL) throws {
        try Self.validate(appName)
        func xdg(_ name: String, default relative: String) -> URL {
            if let value = environment[name], value.hasPrefix("/") {
                return URL(fileURLWithPath: value, isDirectory: true)
            }
            return homeDirectory.appendingPathComponent(relative, isDirectory: true)
        }
        let data = xdg("XDG_DATA_HOME", default: ".local/share").appendingPathComponent(appName, isDirectory: true)
        self.appName = appName
        self.documents = data.appendingPathComponent("Documents", isDirectory: true)
        self.library = data.appendingPathComponent("Library", isDirectory: true)
        self.preferences = xdg("XDG_CONFIG_HOME", default: ".config").appendingPathComponent(appName, isDirectory: true)
        self.caches = xdg("XDG_CACHE_HOME", default: ".cache").appendingPathComponent(appName, isDirectory: true)
        let tmp: String
        if let value = environment["TMPDIR"], !value.isEmpty {
            tmp = value
        } else {
            tmp = "/tmp"
        }
        self.temporary = URL(fileURLWithPath: tmp, isDirectory: true)
            .appendingPathComponent("\(appName)-\(getuid())", isDirectory: true)
    }

    /// Creates each folder (and its parents) with mode 0700; folders that exist are left as they are.
    ///
    /// ``temporary`` lies in a folder every user may write to, so where it exists already it must be the current
    /// user's own: a real folder (not a symbolic link), owned by the current user, that no other user may write to.
    /// - Throws: ``StoreError/Code/io`` when a folder cannot be created, or when ``temporary`` exists and is not the
    ///   current user's own.
    public func createDirectories() throws {
        for url in [documents, library, preferences, caches, temporary] {
            do {
                try FileManager.default.createDirectory(
                    at: url,
                    withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o700]
                )
            } catch {
                throw StoreError(code: .io, message: "cannot create directory", url: url, underlying: error)
            }
        }
        try Self.checkOwnFolder(temporary)
    }

    /// Refuses a folder that another user made, or may write to, or that is a link to somewhere else.
    private static func checkOwnFolder(_ url: URL) throws {
        var info = stat()
        guard lstat(url.path, &info) == 0 else {
            throw StoreError(code: .io, message: "cannot inspect directory", url: url, underlying: FileIO.errnoError())
        }
        let mode = info.st_mode
        guard mode & mode_t(S_IFMT) == mode_t(S_IFDIR), info.st_uid == getuid(), mode & 0o022 == 0 else {
            throw StoreError(
                code: .io,
                message: "the temporary folder is not this user's own (owner \(info.st_uid), mode "
                    + "\(String(mode & 0o7777, radix: 8))\(mode & mode_t(S_IFMT) == mode_t(S_IFLNK) ? ", a symbolic link" : "")): "
                    + "remove it or set TMPDIR",
                url: url
            )
        }
    }

    /// `$HOME` when it is an absolute path, else the password database's home of the current user.
    static func homeDirectory(_ environment: [String: String]) -> URL {
        if let home = environment["HOME"], home.hasPrefix("/") {
            return URL(fileURLWithPath: home, isDirectory: true)
        }
        return FileManager.default.homeDirectoryForCurrentUser
    }

    private static func validate(_ appName: String) throws {
        if appName.isEmpty || appName == "." || appName == ".." || appName.contains("/") || appName.contains("\0") {
            throw StoreError(code: .invalidArgument, message: "invalid app name \"\(appName)\"")
        }
    }
}
