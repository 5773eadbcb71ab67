import Foundation

/// How a file store turns its records into the bytes of its store file and of one journal entry.
protocol FileRecordCodec<Record> {
    associatedtype Record: Codable & Identifiable & Sendable where Record.ID: Codable & Sendable

    /// The whole store file; throws ``StoreError/Code/invalidArgument`` when a record cannot be encoded.
    func encodeFile(_ records: [Record]) throws -> Data
    /// The records of a store file; throws ``StoreError/Code/corruptData``.
    func decodeFile(_ data: Data) throws -> [Record]
    /// One record as a journal payload; throws ``StoreError/Code/invalidArgument``.
    func encodeEntry(_ record: Record) throws -> Data
    /// One record from a journal payload; throws any error (the caller reports `.corruptData`).
    func decodeEntry(_ data: Data) throws -> Record
}
