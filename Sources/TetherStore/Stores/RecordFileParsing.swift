public import Foundation

/// Entry points into the decoders of ``PropertyListStore`` and ``ArchiveStore`` files, for the libFuzzer targets in
/// `Fuzz/` (`@_spi(Fuzzing) import TetherStore`). Each calls the code a store runs on opening its file, unchanged.
/// Not for applications: this interface may change at any time.
@_spi(Fuzzing)
public enum RecordFileParsing {
    /// The three kinds of store file.
    public enum Format: Sendable, CaseIterable {
        /// ``PropertyListStore`` with `.xml`.
        case xmlPropertyList
        /// ``PropertyListStore`` with `.binary`.
        case binaryPropertyList
        /// ``ArchiveStore`` (root key `records`).
        case keyedArchive
    }

    private static let url = URL(fileURLWithPath: "/fuzz/records")

    /// The notes of a store file, as a store opening it reads them.
    /// - Throws: ``StoreError`` (``StoreError/Code/corruptData`` for bytes that are not such a file).
    public static func decode(_ data: Data, as format: Format) throws -> [Note] {
        switch format {
        case .xmlPropertyList: try PropertyListCodec<Note>(format: .xml, url: url).decodeFile(data)
        case .binaryPropertyList: try PropertyListCodec<Note>(format: .binary, url: url).decodeFile(data)
        case .keyedArchive: try ArchiveCodec<Note>(rootKey: "records", url: url).decodeFile(data)
        }
    }

    /// The store file a store writes for `notes`.
    /// - Throws: ``StoreError`` (``StoreError/Code/invalidArgument`` for a note that cannot be encoded).
    public static func encode(_ notes: [Note], as format: Format) throws -> Data {
        switch format {
        case .xmlPropertyList: try PropertyListCodec<Note>(format: .xml, url: url).encodeFile(notes)
        case .binaryPropertyList: try PropertyListCodec<Note>(format: .binary, url: url).encodeFile(notes)
        case .keyedArchive: try ArchiveCodec<Note>(rootKey: "records", url: url).encodeFile(notes)
        }
    }

    /// Tether's own binary property list reader (`bplist00`, with `UID` objects).
    /// - Throws: the reader's error for bytes that are not a binary property list it supports.
    public static func readBinaryPropertyList(_ data: Data) throws -> PlistValue {
        try BinaryPropertyList.read(data)
    }

    /// Tether's own binary property list writer.
    public static func writeBinaryPropertyList(_ value: PlistValue) -> Data {
        BinaryPropertyList.write(value)
    }

    /// Tether's own keyed-archive reader: the value under `rootKey`.
    /// - Throws: the reader's error for bytes that are not a keyed archive of property-list classes.
    public static func unarchive(_ data: Data, rootKey: String) throws -> PlistValue {
        try KeyedArchive.unarchive(data, rootKey: rootKey)
    }

    /// Tether's own keyed-archive writer.
    public static func archive(_ value: PlistValue, rootKey: String) -> Data {
        KeyedArchive.archive(value, rootKey: rootKey)
    }
}
