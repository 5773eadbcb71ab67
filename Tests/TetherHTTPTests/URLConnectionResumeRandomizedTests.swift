import Foundation
import Testing
import TetherConcurrency
import TetherTestSupport

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads resumed again and again against an origin that cuts each body at a seeded random point and changes the
/// resource between attempts: every partial file is a prefix of the version its resume data names, and the finished
/// file is byte-identical to the resource, never a mix of two versions. `TETHER_SEED=S` replays one seed.
@Suite(.timeLimit(.minutes(3)))
struct URLConnectionResumeRandomizedTests {
    static let seeds: [UInt64] =
        ProcessInfo.processInfo.environment["TETHER_SEED"].flatMap(UInt64.init).map { [$0] }
        ?? Array(3400..<3408)

    /// Version `version` of a resource of seeded random length and bytes, with an entity tag or a date.
    static func resource(version: Int, byTag: Bool, generator: inout SeededGenerator) -> RangeOrigin.Resource {
        let length = Int.random(in: 1...120_000, using: &generator)
        let body = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
        if byTag { return RangeOrigin.Resource(body: body, etag: "\"v\(version)\"", lastModified: nil) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let date = formatter.string(from: Date(timeIntervalSince1970: 1_800_000_000 + Double(version) * 60))
        return RangeOrigin.Resource(body: body, etag: nil, lastModified: date)
    }

    @Test(arguments: Self.seeds)
    func everyResumedFileIsOneVersionByteForByte(seed: UInt64) async throws {
        var generator = SeededGenerator(seed: seed)
        let byTag = generator.chance(0.5)
        var version = 1
        var versions: [DownloadResumeData.Validator: [UInt8]] = [:]
        func record(_ resource: RangeOrigin.Resource) {
            let validator: DownloadResumeData.Validator =
                resource.etag.map { .entityTag($0) } ?? .lastModified(resource.lastModified!)
            versions[validator] = resource.body
        }
        let first = Self.resource(version: version, byTag: byTag, generator: &generator)
        record(first)
        // The origin draws its cuts from a generator of its own, in request order.
        let cuts = LockedBox(SeededGenerator(seed: seed ^ 0x5EED_5EED))
        let origin = try await RangeOrigin.start(first) { _, length in
            cuts.withLock { cuts in cuts.chance(0.7) ? .cut(after: Int.random(in: 0..<length, using: &cuts)) : .none }
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tether-resume-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("file.bin")
        let replay = "seed \(seed) (TETHER_SEED=\(seed) replays it)"

        var resumeData: DownloadResumeData?
        var finished = false
        for attempt in 0..<80 where !finished {
            if attempt > 0, generator.chance(0.25) {
                version += 1
                let next = Self.resource(version: version, byTag: byTag, generator: &generator)
                record(next)
                origin.resource = next
            }
            do {
                _ = try await URLConnection.download(
                    request(origin.url),
                    to: destination,
                    resumingWith: resumeData,
                    configuration: .uncached
                )
                finished = true
                let file = try Data(contentsOf: destination)
                #expect(file == Data(origin.resource.body), "\(replay): the file is not version \(version)")
                let left = try FileManager.default.contentsOfDirectory(atPath: directory.path)
                #expect(left == ["file.bin"], "\(replay): left behind \(left)")
            } catch let error as URLError {
                #expect(error.code == .networkConnectionLost, "\(replay): attempt \(attempt) failed with \(error)")
                resumeData = error.downloadResumeData
                if let resumeData {
                    // Invariant: the partial file is a prefix of the version its validator names.
                    let partial = try [UInt8](Data(contentsOf: resumeData.partialFile))
                    let named = versions[resumeData.validator] ?? []
                    #expect(
                        partial.count == resumeData.bytesReceived && named.starts(with: partial),
                        "\(replay): the partial file of attempt \(attempt) is not a prefix of its version"
                    )
                }
            }
        }
        await origin.stop()
        #expect(finished, "\(replay): no attempt finished")
    }
}
