import Dispatch
import Foundation
import Testing
import TetherConcurrency

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `timeoutInterval` counts the server's silence, not the time the load spends on its own steps: bytes that arrived
/// while the load was busy elsewhere reach the delegate before the timeout fails the load.
@Suite(.timeLimit(.minutes(1)))
struct URLConnectionIdleTimeoutTests {
    @Test func bytesThatArriveWhileTheLoadIsBusyReachTheDelegateBeforeTheTimeout() async throws {
        // Seven bytes with the head, then silence; the Set-Cookie makes the load store a cookie, on the cookie queue,
        // between the head and the body, and the test holds that queue for three idle timeouts.
        let path = "/idle-timeout-\(UUID().uuidString)"
        var resource = RangeOrigin.Resource(body: Array("1234567 and the rest".utf8), etag: nil, lastModified: nil)
        resource.extraHeaders = ["Set-Cookie": "tether-idle=1; Path=\(path)"]
        try await withRangeOrigin(resource, faults: [.stall(after: 7)]) { origin in
            let url = URL(string: "http://127.0.0.1:\(origin.port)\(path)")!
            defer {
                for cookie in HTTPCookieStorage.shared.cookies(for: url) ?? [] {
                    HTTPCookieStorage.shared.deleteCookie(cookie)
                }
            }
            let release = DispatchSemaphore(value: 0)
            HTTPLoad.cookieQueue.async { release.wait() }
            let delegate = RecordingDelegate()
            async let loaded = load(request(url, timeout: 0.5), delegate: delegate)
            // The hold, not a synchronisation: three idle timeouts of the load being busy with its cookies.
            try await Task.sleep(for: .seconds(1.5))
            // The load waited for the held queue (the response comes after its cookies are stored).
            #expect(!delegate.events.contains { if case .response = $0 { true } else { false } })
            release.signal()
            _ = try await loaded
            #expect(delegate.events.contains(.data(7)), "\(delegate.events)")
            #expect(delegate.events.last == .failed(.timedOut))
        }
    }
}
