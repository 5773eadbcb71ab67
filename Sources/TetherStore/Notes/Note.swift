public import Foundation

/// A note of the seed's notes app, keyed by a UUID instead of its date.
///
/// `date` is encoded as its exact `timeIntervalSinceReferenceDate` (a `Double`), not as a property-list `<date>`, so
/// that it round-trips exactly through every store, XML property lists included.
public struct Note: Codable, Identifiable, Sendable, Hashable {
    /// The primary key.
    public var id: UUID
    /// When the note was written.
    public var date: Date
    /// The note's text.
    public var content: String

    /// Creates a note.
    /// - Parameters:
    ///   - id: The primary key; default is a new UUID.
    ///   - date: When the note was written; default is now.
    ///   - content: The note's text.
    public init(id: UUID = UUID(), date: Date = Date(), content: String) {
        self.id = id
        self.date = date
        self.content = content
    }

    private enum CodingKeys: String, CodingKey {
        case id, date, content
    }

    /// Decodes a note whose `date` is seconds since 2001-01-01 UTC.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        date = Date(timeIntervalSinceReferenceDate: try container.decode(Double.self, forKey: .date))
        content = try container.decode(String.self, forKey: .content)
    }

    /// Encodes the note with `date` as seconds since 2001-01-01 UTC. A NaN date is written as the canonical NaN:
    /// Foundation's binary property list encoder can trap on NaNs with other payloads (found by `FuzzRecordFile`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        let seconds = date.timeIntervalSinceReferenceDate
        try container.encode(seconds.isNaN ? Double.nan : seconds, forKey: .date)
        try container.encode(content, forKey: .content)
    }
}
