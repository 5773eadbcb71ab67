import Foundation
import Testing
import TetherConcurrency

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `sendSynchronousRequest` and `sendAsynchronousRequest` take a configuration too: its body limit (and cache, TLS,
/// engine) applies, where they used to load with `.default` only.
struct URLConnectionConvenienceConfigurationTests {
    let server: TestServer

    init() async throws {
        server = try await TestServer.http()
    }

    static let small = URLConnection.Configuration(responseCache: nil, maximumResponseBodySize: 1_000)

    @Test func theSynchronousLoadHonoursTheConfigurationsBodyLimit() async throws {
        let url = self.server.url("/big?size=100000")
        let result = Signal<UncheckedSendableBox<(any Error)?>>()
        Thread {
            do {
                _ = try URLConnection.sendSynchronousRequest(
                    URLRequest(url: url),
                    returning: nil,
                    configuration: Self.small
                )
                result.fulfil(UncheckedSendableBox(nil))
            } catch {
                result.fulfil(UncheckedSendableBox(error))
            }
        }.start()
        let error = try await result.wait().value
        #expect((error as? URLError)?.code == .dataLengthExceedsMaximum)
    }

    @Test func theQueuedLoadHonoursTheConfigurationsBodyLimit() async throws {
        let result = Signal<UncheckedSendableBox<(Data?, (any Error)?)>>()
        URLConnection.sendAsynchronousRequest(
            URLRequest(url: self.server.url("/big?size=100000")),
            queue: OperationQueue(),
            configuration: Self.small
        ) { _, data, error in
            result.fulfil(UncheckedSendableBox((data, error)))
        }
        let (data, error) = try await result.wait().value
        #expect(data == nil)
        #expect((error as? URLError)?.code == .dataLengthExceedsMaximum)
    }
}
