import Foundation

/// The Swift code blocks of the DocC articles, so that a test can check that each one is code of a test file.
///
/// A block is checked unless the paragraph just before it starts with `**Before**` (code written against the
/// original library, which cannot compile here) or with `In Package.swift` (a manifest). Lines are compared without
/// their indentation, blank lines dropped.
public enum ArticleSnippets {
    /// The package's root folder: this file is `Tests/TetherTestSupport/ArticleSnippets.swift`.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The checked Swift blocks of the article at `path` (relative to the package root), each as its lines.
    public static func checkedBlocks(ofArticle path: String) throws -> [[String]] {
        let lines = try String(contentsOf: packageRoot.appendingPathComponent(path), encoding: .utf8)
            .components(separatedBy: "\n")
        var blocks: [[String]] = []
        var index = 0
        while index < lines.count {
            let opensSwift = lines[index].hasPrefix("```swift")
            let lead = paragraph(before: index, in: lines)
            let isChecked = opensSwift && !lead.hasPrefix("**Before**") && !lead.hasPrefix("In `Package.swift`")
            let opensFence = lines[index].hasPrefix("```")
            index += 1
            guard opensFence else { continue }
            var block: [String] = []
            while index < lines.count, !lines[index].hasPrefix("```") {
                let line = lines[index].trimmingCharacters(in: .whitespaces)
                if !line.isEmpty { block.append(line) }
                index += 1
            }
            index += 1  // the closing fence
            if isChecked { blocks.append(block) }
        }
        return blocks
    }

    /// The lines of the file at `path` (relative to the package root), without indentation, blank lines dropped.
    public static func lines(ofFile path: String) throws -> [String] {
        try String(contentsOf: packageRoot.appendingPathComponent(path), encoding: .utf8)
            .components(separatedBy: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    /// The checked blocks of `article` that are not consecutive lines of any of `files`.
    public static func blocksMissing(fromArticle article: String, inFiles files: [String]) throws -> [String] {
        let sources = try files.map { try lines(ofFile: $0) }
        return try checkedBlocks(ofArticle: article)
            .filter { block in !sources.contains { containsConsecutively($0, block: block) } }
            .map { $0.joined(separator: "\n") }
    }

    /// Whether `block` occurs in `lines` as consecutive lines.
    static func containsConsecutively(_ lines: [String], block: [String]) -> Bool {
        guard !block.isEmpty, block.count <= lines.count else { return block.isEmpty }
        return (0...(lines.count - block.count)).contains { Array(lines[$0..<($0 + block.count)]) == block }
    }

    /// The first line of the paragraph that ends just before line `index` (blank lines in between skipped).
    private static func paragraph(before index: Int, in lines: [String]) -> String {
        var start = index - 1
        while start >= 0, lines[start].trimmingCharacters(in: .whitespaces).isEmpty { start -= 1 }
        while start > 0, !lines[start - 1].trimmingCharacters(in: .whitespaces).isEmpty { start -= 1 }
        return start >= 0 ? lines[start] : ""
    }
}
