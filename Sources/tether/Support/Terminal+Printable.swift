extension Terminal {
    /// `text` made safe to print on a terminal: control characters (C0, DEL, C1, among them ESC, carriage return and
    /// line feed) and the bidirectional overrides are written as `\u{…}` escapes (`\n`, `\r`, `\t` for the usual
    /// three), so that text from someone else can neither drive the terminal nor fake lines of output.
    static func printable(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A: result += "\\n"
            case 0x0D: result += "\\r"
            case 0x09: result += "\\t"
            case 0x00...0x1F, 0x7F...0x9F, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
