public import Foundation

/// What a finished command printed, and how it ended.
public struct CommandRun: Sendable {
    /// Standard output, decoded as UTF-8.
    public let output: String
    /// Standard error, decoded as UTF-8.
    public let errors: String
    /// The exit code, or the number of the signal that ended it.
    public let status: Int32

    /// Runs `executable` with `arguments` to its end, with `environment` (nil: the parent's), and `input` on standard
    /// input (nil: none).
    ///
    /// Both pipes are read on threads of their own, off the cooperative pool, so a child that fills one while the
    /// test reads the other cannot stall.
    public static func run(
        _ executable: URL,
        _ arguments: [String],
        environment: [String: String]? = nil,
        input: String? = nil
    ) async throws -> CommandRun {
        let process = ChildProcess()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        let inputPipe = input.map { _ in Pipe() }
        process.standardInput = inputPipe ?? FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        if let inputPipe, let input {
            try inputPipe.fileHandleForWriting.write(contentsOf: Data(input.utf8))
            try inputPipe.fileHandleForWriting.close()
        }
        async let printed = offPool { output.fileHandleForReading.readDataToEndOfFile() }
        async let complained = offPool { errors.fileHandleForReading.readDataToEndOfFile() }
        let (out, err) = try await (printed, complained)
        await process.exited()
        return CommandRun(
            output: String(decoding: out, as: UTF8.self),
            errors: String(decoding: err, as: UTF8.self),
            status: process.terminationStatus
        )
    }
}
