import Foundation
import FuzzSupport
@_spi(Fuzzing) import TetherStore

/// Input: a mode byte, then the bytes. Modes 0–2: the bytes are a store file (XML property list, binary property
/// list, keyed archive) that a store opens. Mode 3: a binary property list or keyed archive for Tether's own
/// readers. Modes 4–6: the bytes describe notes that a store of that format writes and reads back.
///
/// `FuzzRecordFile -write_seeds=DIR` writes one store file of each format, made by the real stores, into DIR.
@main
enum FuzzRecordFile {
    static func main() async {
        if let argument = CommandLine.arguments.first(where: { $0.hasPrefix("-write_seeds=") }) {
            await writeSeeds(into: URL(fileURLWithPath: String(argument.dropFirst("-write_seeds=".count))))
            exit(0)
        }
        runFuzzer(fuzzRecordFile)
    }
}

let formats = RecordFileParsing.Format.allCases

func fuzzRecordFile(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = Int(input.byte() % 7)
    let bytes = Data(input.rest)
    switch mode {
    case 0, 1, 2: checkStoreFile(bytes, formats[mode])
    case 3: checkTetherReaders(bytes)
    default: checkWrittenNotes(input.rest, formats[mode - 4])
    }
    return 0
}

/// A store file decodes to notes or to `.corruptData`, the same twice; notes written back read back the same.
private func checkStoreFile(_ bytes: Data, _ format: RecordFileParsing.Format) {
    let notes: [Note]
    do {
        notes = try RecordFileParsing.decode(bytes, as: format)
    } catch let error as StoreError {
        require(error.code == .corruptData, "a bad \(format) file gives \(error.code), not corruptData")
        do {
            _ = try RecordFileParsing.decode(bytes, as: format)
            require(false, "decoding twice differs: once an error, once notes")
        } catch {}
        return
    } catch {
        require(false, "a bad \(format) file gives \(type(of: error)), not a StoreError")
        return
    }
    require(same(notes, try? RecordFileParsing.decode(bytes, as: format)), "decoding twice differs")
    require(notes.count <= bytes.count, "more notes than bytes")
    checkRoundTrip(notes, format)
}

/// Notes a store writes read back the same, or the store refuses to write them (`.invalidArgument`).
private func checkRoundTrip(_ notes: [Note], _ format: RecordFileParsing.Format) {
    let file: Data
    do {
        file = try RecordFileParsing.encode(notes, as: format)
    } catch let error as StoreError {
        require(error.code == .invalidArgument, "writing notes gives \(error.code), not invalidArgument")
        return
    } catch {
        require(false, "writing notes gives \(type(of: error)), not a StoreError")
        return
    }
    do {
        let again = try RecordFileParsing.decode(file, as: format)
        require(same(notes, again), "notes written as \(format) read back differently: \(notes) became \(again)")
    } catch {
        require(false, "a \(format) file the store wrote does not read back: \(error); notes \(notes)")
    }
}

/// Tether's own binary property list and keyed archive readers: bounded output, and what they read written back
/// reads back the same.
private func checkTetherReaders(_ bytes: Data) {
    let limit = max(4 * bytes.count, 1024) + 1
    if let value = try? RecordFileParsing.readBinaryPropertyList(bytes) {
        require(nodes(value) <= limit, "the property list reader made \(nodes(value)) values of \(bytes.count) bytes")
        let written = RecordFileParsing.writeBinaryPropertyList(value)
        let again = try? RecordFileParsing.readBinaryPropertyList(written)
        require(again.map { same(value, $0) } ?? false, "a property list written back reads differently")
    }
    if let value = try? RecordFileParsing.unarchive(bytes, rootKey: "records") {
        require(nodes(value) <= limit, "the archive reader made \(nodes(value)) values of \(bytes.count) bytes")
        let written = RecordFileParsing.archive(value, rootKey: "records")
        let again = try? RecordFileParsing.unarchive(written, rootKey: "records")
        require(again.map { same(value, $0) } ?? false, "an archive written back reads differently")
    }
}

/// Notes described by the bytes (16 bytes of id, 8 of date, a length byte and the content) written by a store and
/// read back.
private func checkWrittenNotes(_ bytes: [UInt8], _ format: RecordFileParsing.Format) {
    var notes: [Note] = []
    var rest = bytes[...]
    while rest.count >= 25, notes.count < 16 {
        let id = rest.prefix(16).withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        let seconds = rest.dropFirst(16).prefix(8).withUnsafeBytes { $0.loadUnaligned(as: Double.self) }
        let length = Int(rest[rest.startIndex + 24])
        let content = String(decoding: rest.dropFirst(25).prefix(length), as: UTF8.self)
        rest = rest.dropFirst(25 + length)
        notes.append(Note(id: id, date: Date(timeIntervalSinceReferenceDate: seconds), content: content))
    }
    checkRoundTrip(notes, format)
}

/// Equal notes, with NaN dates equal to each other.
private func same(_ lhs: [Note], _ rhs: [Note]?) -> Bool {
    guard let rhs, lhs.count == rhs.count else { return false }
    return zip(lhs, rhs).allSatisfy { left, right in
        left.id == right.id && left.content == right.content
            && same(left.date.timeIntervalSinceReferenceDate, right.date.timeIntervalSinceReferenceDate)
    }
}

private func same(_ lhs: Double, _ rhs: Double) -> Bool {
    lhs == rhs || (lhs.isNaN && rhs.isNaN)
}

/// Equal values, with NaN equal to NaN.
private func same(_ lhs: PlistValue, _ rhs: PlistValue) -> Bool {
    switch (lhs, rhs) {
    case (.real(let left), .real(let right)), (.date(let left), .date(let right)): same(left, right)
    case (.array(let left), .array(let right)):
        left.count == right.count && zip(left, right).allSatisfy { same($0, $1) }
    case (.dictionary(let left), .dictionary(let right)):
        left.count == right.count && left.allSatisfy { key, value in right[key].map { same(value, $0) } ?? false }
    default: lhs == rhs
    }
}

/// The number of values in `value`, containers included.
private func nodes(_ value: PlistValue) -> Int {
    switch value {
    case .array(let items): items.reduce(1) { $0 + nodes($1) }
    case .dictionary(let items): items.values.reduce(1) { $0 + nodes($1) }
    default: 1
    }
}
