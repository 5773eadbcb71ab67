import Dispatch
import Foundation
import Testing

@testable import TetherReachability

/// `waitForConnectivity` and the debounce window over an injected back-end.
struct NetworkReachabilityManagerWaitingTests {
    static let ethernet = NetworkReachabilityManagerTests.ethernet
    static let wifi = NetworkReachabilityManagerTests.wifi
    static let offline = NetworkReachabilityManagerTests.offline

    let queue = DispatchQueue(label: "tests.reachability.waiting")

    @Test func waitingReturnsAtOnceWhenTheTargetIsReachable() async throws {
        let manager = NetworkReachabilityManager(
            monitor: FakePathMonitor(initialPath: Self.ethernet),
            callbackQueue: queue
        )
        let path = try await manager.waitForConnectivity(timeout: .seconds(60))
        #expect(path.interfaceName == "eth0")
        #expect(manager.isMonitoring)
    }

    @Test func waitingReturnsWhenTheBackEndReportsARoute() async throws {
        let monitor = FakePathMonitor(initialPath: Self.offline)
        let manager = NetworkReachabilityManager(monitor: monitor, callbackQueue: queue)
        manager.startMonitoring()
        let waiter = Task { try await manager.waitForConnectivity(timeout: .seconds(60)) }
        monitor.report(Self.wifi)
        let path = try await waiter.value
        #expect(path.interfaceName == "wlan0")
    }

    @Test func waitingWithoutARouteThrowsConnectivityTimedOut() async throws {
        let manager = NetworkReachabilityManager(
            monitor: FakePathMonitor(initialPath: Self.offline),
            callbackQueue: queue
        )
        await #expect(throws: NetworkReachabilityError.self) {
            do {
                _ = try await manager.waitForConnectivity(timeout: .milliseconds(50))
            } catch let error as NetworkReachabilityError {
                #expect(error.code == .connectivityTimedOut)
                throw error
            }
        }
        // A zero timeout checks once.
        do {
            _ = try await manager.waitForConnectivity(timeout: .zero)
            Issue.record("a zero timeout without a route returned")
        } catch NetworkReachabilityError.Code.connectivityTimedOut {}
    }

    @Test func aCancelledWaitThrowsCancellationError() async throws {
        let manager = NetworkReachabilityManager(
            monitor: FakePathMonitor(initialPath: Self.offline),
            callbackQueue: queue
        )
        manager.startMonitoring()
        let waiter = Task { try await manager.waitForConnectivity(timeout: .seconds(600)) }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiter.value }
    }

    @Test func waitingForAnEmptyHostThrowsInvalidHost() async throws {
        do {
            _ = try await NetworkReachabilityManager.waitForConnectivity(to: "", timeout: .seconds(1))
            Issue.record("an empty host was accepted")
        } catch NetworkReachabilityError.Code.invalidHost {}
    }

    #if os(Linux)
    @Test func waitingForThisHostsLoopbackAddressReturnsItsLoopbackPath() async throws {
        let path = try await NetworkReachabilityManager.waitForConnectivity(to: "127.0.0.1", timeout: .seconds(10))
        #expect(path.interfaceName == "lo")
        #expect(path.interfaceKind == .loopback)
    }
    #endif

    /// With a window, a change and the next one inside it are delivered once, with the final status; the first
    /// status after the start is delivered at once; `path` always shows the latest evaluation.
    @Test func changesInsideTheDebounceWindowAreDeliveredOnceWithTheFinalStatus() {
        let monitor = FakePathMonitor(initialPath: Self.ethernet)
        let manager = NetworkReachabilityManager(monitor: monitor, callbackQueue: queue)
        manager.debounceInterval = .seconds(1)
        let recorder = Recorder<NetworkReachabilityStatus>()
        manager.setReachabilityStatusChangeBlock { recorder.append($0) }
        manager.startMonitoring()
        #expect(recorder.wait(forCount: 1) == [.reachableViaEthernet])
        monitor.report(Self.offline)
        monitor.report(Self.wifi)
        #expect(manager.path.interfaceName == "wlan0")
        #expect(recorder.wait(forCount: 2) == [.reachableViaEthernet, .reachableViaWiFi])
        queue.sync {}
        #expect(recorder.all == [.reachableViaEthernet, .reachableViaWiFi])
    }

    @Test func aNegativeDebounceIntervalIsZero() {
        let manager = NetworkReachabilityManager(monitor: FakePathMonitor(), callbackQueue: queue)
        #expect(manager.debounceInterval == .zero)
        manager.debounceInterval = .seconds(-1)
        #expect(manager.debounceInterval == .zero)
    }
}
