import Foundation

/// Converts the seed app's `NotesList.plist` (an array of `{date: "yyyy-MM-dd HH:mm:ss", content}`) into a
/// ``PropertyListStore`` file of ``Note``s, once, in place and durably.
enum LegacyNotesImporter {
    /// Whether `data` is a property list in the seed's format: an array whose dictionaries carry a string `date` and
    /// no `id`.
    static func legacyNotes(in data: Data, url: URL) throws -> [Note]? {
        guard let list = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil),
            let array = list as? [Any], !array.isEmpty
        else { return nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        var notes: [Note] = []
        for (index, element) in array.enumerated() {
            guard let dictionary = element as? [String: Any], dictionary["id"] == nil,
                let dateString = dictionary["date"] as? String
            else { return nil }
            // Only visible ASCII reaches DateFormatter: swift-corelibs-foundation's `date(from:)` traps when its parse
            // stops before a combining mark (found by `FuzzCacheControl` in HTTP dates), and the format is ASCII.
            guard dateString.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }), let date = formatter.date(from: dateString)
            else {
                throw StoreError(
                    code: .corruptData,
                    message: "seed note \(index + 1) has the date \"\(dateString)\", not yyyy-MM-dd HH:mm:ss",
                    url: url
                )
            }
            let content = dictionary["content"] as? String ?? ""
            notes.append(Note(date: date, content: content))
        }
        return notes
    }

    /// Rewrites a seed-format file at `url` as a property list store; any other file is left alone.
    static func convertIfNeeded(_ url: URL) throws {
        guard let data = try FileIO.readIfExists(url) else { return }
        // Cheap check first: our own files always carry an "id" key.
        guard let notes = try legacyNotes(in: data, url: url) else { return }
        // Hold the store's lock while converting, so that a store open elsewhere is not overwritten.
        let lock = try FileLock(url: URL(fileURLWithPath: url.path + ".lock"))
        defer { withExtendedLifetime(lock) {} }
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .xml
        let converted: Data
        do {
            converted = try encoder.encode(notes)
        } catch {
            throw StoreError(
                code: .invalidArgument,
                message: "seed notes cannot be encoded",
                url: url,
                underlying: error
            )
        }
        // A stale journal would belong to no file of ours; a converted file starts without one.
        let journal = URL(fileURLWithPath: url.path + ".journal")
        try? FileManager.default.removeItem(at: journal)
        try FileIO.writeAtomically(converted, to: url)
    }
}
