import Foundation
import Testing
import TetherConcurrency

/// The system tools and kernel features that some tests need, found one way.
///
/// A test that lacks one is skipped with a message that names it and the Debian package that has it (Swift Testing's
/// `Test.cancel`, reported as a skip, not a failure), so a machine without PostgreSQL's tools or user namespaces still
/// runs everything else. Under CI (`CI` set and not `false`), where `.ci/run` installs every tool, a missing one fails
/// the test instead: a skip there would hide a missing install step.
///
/// Call these from the test's own task (not from a detached task or a thread): that is the test they skip.
public enum SystemRequirements {
    /// Why a test cannot run here.
    public struct Missing: Error, CustomStringConvertible {
        public let description: String
    }

    /// The Debian package of each tool the tests run.
    static let packages = [
        "ip": "iproute2", "tc": "iproute2", "unshare": "util-linux", "nsenter": "util-linux", "setpriv": "util-linux",
        "mount": "mount", "openssl": "openssl", "python3": "python3", "iptables": "iptables",
    ]

    /// The folders searched: `PATH`, then the system folders a non-login shell may lack.
    public static let searchPath: [String] = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        var unique: [String] = []
        for folder in folders where !unique.contains(folder) { unique.append(folder) }
        return unique
    }()

    /// Whether a missing requirement fails the test instead of skipping it (under CI).
    public static let isRequired: Bool = {
        guard let value = ProcessInfo.processInfo.environment["CI"] else { return false }
        return !value.isEmpty && value.lowercased() != "false" && value != "0"
    }()

    /// The full path of `name` in ``searchPath``, or nil.
    public static func path(of name: String) -> String? {
        for folder in searchPath {
            let candidate = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// The full path of the tool `name`; skips the current test (fails it under CI) when it is not installed.
    /// - Parameter purpose: what the test uses it for, said in the message.
    @discardableResult
    public static func tool(_ name: String, for purpose: String) throws -> String {
        if let path = path(of: name) { return path }
        let package = packages[name].map { " (apt-get install \($0))" } ?? ""
        let folders = searchPath.joined(separator: ":")
        try unavailable("needs `\(name)`\(package) for \(purpose); not found in \(folders)")
    }

    /// Whether this process may make user namespaces with `flags` (`-rn`: user and network; `-rm`: user and
    /// mount), checked once per set of flags by running `unshare <flags> true`; nil when it may, else why not.
    static func namespaceProblem(_ flags: String) -> String? {
        namespaceProblems.withLock { problems in
            if let known = problems[flags] { return known }
            let problem = checkNamespaces(flags)
            problems[flags] = .some(problem)
            return problem
        }
    }

    /// Skips the current test (fails it under CI) when user namespaces of this kind cannot be made here.
    /// - Parameters:
    ///   - flags: `unshare`'s flags, e.g. `-rn` (user and network) or `-rm` (user and mount).
    ///   - purpose: what the test uses them for.
    public static func namespaces(_ flags: String, for purpose: String) throws {
        try tool("unshare", for: purpose)
        if let problem = namespaceProblem(flags) {
            try unavailable(
                "needs user namespaces (`unshare \(flags)`) for \(purpose), which this system refuses: \(problem)"
            )
        }
    }

    /// The namespace checks done so far, by flags (a value of nil: that kind works).
    private static let namespaceProblems = LockedBox<[String: String?]>([:])

    private static func checkNamespaces(_ flags: String) -> String? {
        guard let unshare = path(of: "unshare") else { return "unshare is not installed" }
        let check = ChildProcess()
        check.executableURL = URL(fileURLWithPath: unshare)
        check.arguments = [flags, "/bin/true"]
        let errors = Pipe()
        check.standardError = errors
        check.standardOutput = FileHandle.nullDevice
        do {
            try check.run()
        } catch {
            return "\(unshare) could not be started: \(error)"
        }
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        check.waitUntilExit()
        guard check.terminationStatus != 0 else { return nil }
        let text = String(decoding: message, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return "`unshare \(flags) true` exited with \(check.terminationStatus): \(text)"
    }

    private static func unavailable(_ reason: String) throws -> Never {
        if isRequired {
            throw Missing(description: "\(reason) (CI is set: .ci/run installs every tool, so this is a failure)")
        }
        try Test.cancel(Comment(rawValue: reason))
    }
}
