import ArgumentParser

/// The `tether` command: a tour and small tools over the Tether library.
@main
struct Tether: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tether",
        abstract: "CocoaAsyncSocket, NSURLConnection, reachability and the notes stores, on SwiftNIO.",
        discussion: """
            Exit status: 0 on success, 1 on failure, 64 on bad arguments, 130 on SIGINT, 143 on SIGTERM, \
            141 when the output goes to a pipe that nobody reads any more, 74 when it cannot be written.
            """,
        version: "0.1.0",
        subcommands: [
            DemoCommand.self, ServeCommand.self, NetcatCommand.self, GetCommand.self, ReachCommand.self,
            NotesCommand.self,
        ]
    )
}

/// Options every subcommand takes.
struct CommonOptions: ParsableArguments {
    @Flag(help: "Log debug messages to standard error.")
    var verbose = false
}
