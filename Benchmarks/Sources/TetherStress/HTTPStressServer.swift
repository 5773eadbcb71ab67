final class HTTPStressServer: Sendable {
    let port = 0
    static func start(counters: ServerCounters) async throws -> HTTPStressServer { HTTPStressServer() }
}
