import Foundation
import Testing
import TetherConcurrency

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct URLConnectionDownloadTests {
    let server: TestServer

    init() async throws {
        server = try await TestServer.http()
    }

    private func makeDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-dl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    private func contents(of directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    @Test func downloadStreamsIntoTheDestinationAndReportsProgress() async throws {
        let directory = try self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("big.bin")
        let size = 50 << 20
        let reports = LockedBox<[DownloadProgress]>([])
        let response = try await URLConnection.download(
            request(self.server.url("/big?size=\(size)"), timeout: 60),
            to: destination,
            configuration: .uncached
        ) { progress in reports.withLock { $0.append(progress) } }
        #expect(response.statusCode == 200)
        let attributes = try FileManager.default.attributesOfItem(atPath: destination.path)
        #expect((attributes[.size] as? NSNumber)?.intValue == size)
        let all = reports.withLock { $0 }
        #expect(all.last?.totalBytesWritten == Int64(size))
        #expect(all.last?.fractionCompleted == 1)
        #expect(all.reduce(0) { $0 + $1.bytesWritten } == Int64(size))
        #expect(try self.contents(of: directory) == ["big.bin"])
    }

    @Test func downloadAtomicallyReplacesAnExistingFile() async throws {
        let directory = try self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("file.txt")
        try Data("old".utf8).write(to: destination)
        _ = try await URLConnection.download(
            request(self.server.url("/hello")),
            to: destination,
            configuration: .uncached
        )
        #expect(try Data(contentsOf: destination) == Data("hello".utf8))
        #expect(try self.contents(of: directory) == ["file.txt"])
    }

    @Test func aNon2xxStatusWritesNothing() async throws {
        let directory = try self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("file.txt")
        try Data("old".utf8).write(to: destination)
        await expectURLError(.badServerResponse) {
            _ = try await URLConnection.download(
                request(self.server.url("/status/404")),
                to: destination,
                configuration: .uncached
            )
        }
        #expect(try Data(contentsOf: destination) == Data("old".utf8))
        #expect(try self.contents(of: directory) == ["file.txt"])
    }

    @Test func aConnectionLostMidBodyLeavesNoPartialFile() async throws {
        let directory = try self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("file.txt")
        await expectURLError(.networkConnectionLost) {
            _ = try await URLConnection.download(
                request(self.server.url("/reset")),
                to: destination,
                configuration: .uncached
            )
        }
        #expect(try self.contents(of: directory).isEmpty)
    }

    @Test func anUnwritableDestinationFailsWithCannotCreateFile() async throws {
        let destination = URL(fileURLWithPath: "/proc/tether-cannot-write-here/file.txt")
        await expectURLError(.cannotCreateFile) {
            _ = try await URLConnection.download(
                request(self.server.url("/hello")),
                to: destination,
                configuration: .uncached
            )
        }
    }
}
