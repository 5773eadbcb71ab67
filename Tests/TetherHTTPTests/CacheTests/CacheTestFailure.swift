/// Why a test did not pass, as the suite records it: `Assertion` (the cache did something else), `Setup` (a step
/// the test needs did not happen, so the test says nothing), or the name of an error that stopped the test.
struct CacheTestFailure: Error, Equatable, Sendable {
    var kind: String
    var message: String

    /// The suite's `assert`: a failed check of a setup step is a `Setup` failure, else an `Assertion`.
    static func check(_ isSetup: Bool, _ condition: Bool, _ message: @autoclosure () -> String) throws {
        if condition { return }
        throw CacheTestFailure(kind: isSetup ? "Setup" : "Assertion", message: message())
    }
}
