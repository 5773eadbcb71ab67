import ArgumentParser

/// The `tether` command: a tour and small tools over the Tether library.
@main
struct Tether: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tether",
        abstract: "CocoaAsyncSocket, NSURLConnection, reachability and the notes stores, on SwiftNIO.",
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
