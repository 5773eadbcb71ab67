import NIOConcurrencyHelpers

/// Runs work with a deadline: the caller goes on after `seconds` even if the work never ends (it is left running
/// and reported), so that no step of a scenario can hang the tool.
enum Deadline {
    /// Returns true when `body` finished in time.
    static func run(seconds: Double, _ body: @escaping @Sendable () async -> Void) async -> Bool {
        let resumed = NIOLockedValueBox(false)
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            @Sendable func resume(_ value: Bool) {
                let first = resumed.withLockedValue { done in
                    defer { done = true }
                    return !done
                }
                if first { continuation.resume(returning: value) }
            }
            Task {
                await body()
                resume(true)
            }
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                resume(false)
            }
        }
    }
}
