public import Foundation

/// An executable of this package (`tether`, the test probes) that `swift build --build-tests` put next to the test
/// bundle.
public enum BuiltProduct {
    /// The product called `name` in the build folder that holds the running test binary, else in
    /// `$TETHER_PRODUCTS_DIR` (another build's products, for a build made without them: the thread sanitizer's in CI);
    /// nil when it was not built.
    ///
    /// The test runner may sit inside a bundle folder (`….xctest/…`); the products sit next to the bundle, so the search
    /// climbs up to four folders from the running executable.
    public static func url(named name: String) -> URL? {
        if let own = urlNextToTheTests(named: name) { return own }
        guard let folder = ProcessInfo.processInfo.environment["TETHER_PRODUCTS_DIR"], !folder.isEmpty else {
            return nil
        }
        let candidate = URL(fileURLWithPath: folder).appendingPathComponent(name)
        return FileManager.default.isExecutableFile(atPath: candidate.path) ? candidate : nil
    }

    private static func urlNextToTheTests(named name: String) -> URL? {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        for start in [executable, URL(fileURLWithPath: CommandLine.arguments[0])] {
            var folder = start.deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = folder.appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
                folder.deleteLastPathComponent()
            }
        }
        return nil
    }

    /// The product called `name`; throws a message that says how to build it when it is missing.
    public static func require(_ name: String) throws -> URL {
        guard let url = url(named: name) else { throw Missing(name: name) }
        return url
    }

    /// A product the tests need was not built.
    public struct Missing: Error, CustomStringConvertible {
        /// The product's name.
        public let name: String
        public var description: String {
            "\(name) not found next to the test binary: build it first (swift build --build-tests)"
        }
    }
}
