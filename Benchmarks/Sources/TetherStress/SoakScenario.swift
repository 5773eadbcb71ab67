enum SoakScenario {
    static func run(_ options: StressOptions) async throws -> Bool { false }
}
