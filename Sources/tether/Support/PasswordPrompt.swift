import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a password from standard input: on a terminal, after a prompt on standard error and with echo off.
enum PasswordPrompt {
    /// The first line of standard input (without its line end), or nil at the end of the input.
    static func read(_ prompt: String) -> String? {
        let isTerminal = isatty(STDIN_FILENO) == 1
        var saved = termios()
        if isTerminal {
            Terminal.errorOutput(Data(prompt.utf8))
            tcgetattr(STDIN_FILENO, &saved)
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet)
        }
        defer {
            if isTerminal {
                tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
                Terminal.error("")
            }
        }
        guard let line = Swift.readLine(strippingNewline: true) else { return nil }
        return line.hasSuffix("\r") ? String(line.dropLast()) : line
    }
}
