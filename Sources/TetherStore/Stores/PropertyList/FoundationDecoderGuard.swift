import Foundation

/// Foundation's `PropertyListDecoder` stops the process on some damaged binary property lists instead of throwing
/// (found by FuzzRecordFile, bug 11 in FUZZING.md: a UTF-16 string running past its object traps in
/// `BPlistMap.withBuffer`). Bytes that claim to be a binary property list are first parsed by Tether's own
/// bounds-checked reader (``BinaryPropertyList``), which reads everything `PropertyListEncoder` writes; what it
/// refuses never reaches Foundation.
enum FoundationDecoderGuard {
    /// Throws when `data` is a binary property list (`bplist` magic) that Tether's reader cannot parse.
    static func requireParsable(_ data: Data) throws {
        guard data.starts(with: Self.binaryMagic) else { return }
        _ = try BinaryPropertyList.read(data)
    }

    private static let binaryMagic = Data("bplist".utf8)
}
