import Foundation

/// Takes the password out of URLs before they reach a log, an error or a message: the user stays, so that the URL
/// still says whose it was.
enum Redaction {
    /// `string` with the password of its user info removed (`http://ann:secret@h/` → `http://ann@h/`); unchanged
    /// when it has none.
    static func url(_ string: String) -> String {
        let authorityStart = string.range(of: "://")?.upperBound ?? string.startIndex
        let rest = string[authorityStart...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard let at = authority.lastIndex(of: "@") else { return string }
        let userInfo = authority[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return string }
        return String(string[..<colon]) + String(string[at...])
    }

    /// `url` without the password of its user info.
    static func url(_ url: URL) -> URL {
        guard url.password != nil else { return url }
        return URL(string: self.url(url.absoluteString)) ?? url
    }
}
