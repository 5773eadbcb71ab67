import Foundation
import Testing
import TetherTestSupport

/// What documents the `tether` command outside `--help`: its man page, its shell completions, its version.
@Suite(.timeLimit(.minutes(1)))
struct TetherCommandDocsTests {
    /// One command of the tree `tether --experimental-dump-help` prints.
    struct DumpedCommand: Decodable {
        struct Argument: Decodable {
            struct Name: Decodable {
                var kind: String
                var name: String
            }
            var names: [Name]?
            var shouldDisplay: Bool
        }
        var commandName: String
        var arguments: [Argument]?
        var subcommands: [DumpedCommand]?
    }

    struct Dump: Decodable {
        var command: DumpedCommand
    }

    static func run(_ arguments: [String]) async throws -> CommandRun {
        let run = try await CommandRun.run(try BuiltProduct.require("tether"), arguments)
        #expect(run.status == 0, "tether \(arguments): \(run.errors)")
        return run
    }

    /// Every subcommand and every visible option name of the command tree, as "command path: --name".
    static func entries(of command: DumpedCommand, path: String = "") -> [(command: String, option: String?)] {
        let here = path.isEmpty ? command.commandName : "\(path) \(command.commandName)"
        var found: [(String, String?)] = [(here, nil)]
        for argument in command.arguments ?? [] where argument.shouldDisplay {
            for name in argument.names ?? [] where name.kind == "long" { found.append((here, "--\(name.name)")) }
        }
        for sub in command.subcommands ?? [] where sub.commandName != "help" {
            found += entries(of: sub, path: here)
        }
        return found
    }

    @Test("the man page is current: every subcommand and option of the command is in docs/man/tether.1")
    func manPageIsCurrent() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("docs/man/tether.1"), encoding: .utf8)
        let dump = try await Self.run(["--experimental-dump-help"])
        let tree = try JSONDecoder().decode(Dump.self, from: Data(dump.output.utf8)).command
        let entries = Self.entries(of: tree)
        #expect(entries.count > 20)
        // mdoc writes `--name` as `Fl -name` on an item line, after the short name if there is one (`Fl o , -name`).
        let itemWords = Set(
            page.split(separator: "\n").filter { $0.hasPrefix(".It ") }.flatMap { $0.split(separator: " ") }
        )
        for (command, option) in entries {
            if let option {
                #expect(
                    itemWords.contains(Substring(option.dropFirst())),
                    "\(command) \(option): run scripts/manpage.sh"
                )
            } else {
                let name = command.split(separator: " ").last.map(String.init) ?? command
                #expect(page.contains(name), "\(command): run scripts/manpage.sh")
            }
        }
    }

    @Test("the bash completion script is valid bash and completes the subcommands")
    func bashCompletions() async throws {
        let script = try await Self.run(["--generate-completion-script", "bash"]).output
        for subcommand in ["demo", "serve", "nc", "get", "reach", "notes"] {
            #expect(script.contains(subcommand))
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tether-completion-\(UUID()).bash")
        try Data(script.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let check = try await CommandRun.run(URL(fileURLWithPath: "/bin/bash"), ["-n", file.path])
        #expect(check.status == 0, "bash -n: \(check.errors)")
    }

    @Test("zsh and fish completion scripts are generated", arguments: ["zsh", "fish"])
    func otherShellCompletions(shell: String) async throws {
        let script = try await Self.run(["--generate-completion-script", shell]).output
        #expect(script.contains("notes"))
        #expect(script.contains("serve"))
    }

    @Test("--version prints the version")
    func version() async throws {
        let printed = try await Self.run(["--version"]).output
        #expect(printed.range(of: #"^\d+\.\d+\.\d+\n$"#, options: .regularExpression) != nil, "\(printed)")
    }
}
