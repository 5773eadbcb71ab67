/// One row of the side-by-side mode: the same work done by the raw engine and by Tether, both ends in this process.
struct SideBySideRow {
    /// The row's number, which `--rows` chooses by.
    var number: Int
    /// Shown in the table, e.g. "delegate face, bulk upload 256 MiB in 64 KiB writes".
    var name: String
    /// The unit of `amount` per second, e.g. "B/s" or "frames/s".
    var unit: String
    /// The work of one round (bytes, frames, round trips), for the rate.
    var amount: Double
    /// The target the issue sets, as text.
    var target: String
    /// What the raw variant is (NIO handlers, NIOAsyncChannel…), for the row's notes.
    var rawName: String
    var raw: () async throws -> Void
    var tether: () async throws -> Void
}
