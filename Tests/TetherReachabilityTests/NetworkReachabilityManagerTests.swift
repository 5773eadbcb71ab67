import Dispatch
import Foundation
import NIOCore
import Testing

@testable import TetherReachability

struct NetworkReachabilityManagerTests {
    static let ethernet = NetworkPath(
        status: .reachableViaEthernet,
        interfaceName: "eth0",
        interfaceType: .wiredEthernet,
        supportsIPv4: true
    )
    static let wifi = NetworkPath(status: .reachableViaWiFi, interfaceName: "wlan0", interfaceType: .wifi)
    static let cellular = NetworkPath(
        status: .reachableViaWWAN,
        interfaceName: "wwan0",
        interfaceType: .cellular,
        isExpensive: true
    )
    static let offline = NetworkPath(status: .notReachable)

    let queue = DispatchQueue(label: "tests.reachability.callbacks")

    /// Waits until every delivery enqueued so far has run.
    func flush() {
        queue.sync {}
    }

    func makeManager(_ monitor: FakePathMonitor) -> (NetworkReachabilityManager, Recorder<NetworkReachabilityStatus>) {
        let manager = NetworkReachabilityManager(monitor: monitor, callbackQueue: queue)
        let recorder = Recorder<NetworkReachabilityStatus>()
        manager.setReachabilityStatusChangeBlock { recorder.append($0) }
        return (manager, recorder)
    }

    @Test func statusIsUnknownBeforeMonitoringStarts() {
        let (manager, recorder) = makeManager(FakePathMonitor(initialPath: Self.ethernet))
        #expect(manager.networkReachabilityStatus == .unknown)
        #expect(manager.path == NetworkPath(status: .unknown))
        #expect(!manager.isReachable)
        #expect(manager.lastError == nil)
        #expect(manager.localizedNetworkReachabilityStatusString() == "Unknown")
        flush()
        #expect(recorder.all.isEmpty)
    }

    @Test func firstStatusIsKnownWhenStartMonitoringReturnsAndItsCallbackArrivesLater() {
        let (manager, recorder) = makeManager(FakePathMonitor(initialPath: Self.ethernet))
        let delivered = queue.sync {
            // The callback queue is busy: startMonitoring must not wait for it, and the block has not run yet.
            manager.startMonitoring()
            #expect(manager.networkReachabilityStatus == .reachableViaEthernet)
            #expect(manager.path == Self.ethernet)
            return recorder.all
        }
        #expect(delivered.isEmpty)
        flush()
        #expect(recorder.all == [.reachableViaEthernet])
    }

    @Test func convenienceFlagsFollowTheStatus() {
        let monitor = FakePathMonitor(initialPath: Self.cellular)
        let (manager, _) = makeManager(monitor)
        manager.startMonitoring()
        #expect(manager.isReachable && manager.isReachableViaWWAN)
        #expect(!manager.isReachableViaWiFi && !manager.isReachableViaEthernet)
        #expect(manager.localizedNetworkReachabilityStatusString() == "Reachable via WWAN")
        monitor.report(Self.wifi)
        #expect(manager.isReachable && manager.isReachableViaWiFi && !manager.isReachableViaWWAN)
        monitor.report(Self.ethernet)
        #expect(manager.isReachable && manager.isReachableViaEthernet)
        monitor.report(Self.offline)
        #expect(!manager.isReachable)
        #expect(manager.localizedNetworkReachabilityStatusString() == "Not Reachable")
    }

    @Test func blockThenNotificationThenStreamAreDeliveredInThatOrder() async throws {
        let monitor = FakePathMonitor(initialPath: Self.offline)
        let manager = NetworkReachabilityManager(monitor: monitor, callbackQueue: queue)
        let events = Recorder<String>()
        manager.setReachabilityStatusChangeBlock { events.append("block \($0.rawValue)") }
        let observer = NotificationCenter.default.addObserver(
            forName: .networkReachabilityDidChange,
            object: manager,
            queue: nil
        ) { notification in
            let status = notification.userInfo?[NetworkReachabilityNotificationStatusItem] as? Int
            let isManager = (notification.object as AnyObject?) === manager
            events.append("notification \(status.map(String.init) ?? "nil") \(isManager)")
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        var iterator = manager.statusUpdates.makeAsyncIterator()
        manager.startMonitoring()
        // A stream's value is yielded after the block and the notification ran for it.
        if let status = await iterator.next() {
            events.append("stream \(status.rawValue)")
        }
        monitor.report(Self.ethernet)
        if let status = await iterator.next() {
            events.append("stream \(status.rawValue)")
        }
        #expect(
            events.all == [
                "block 0", "notification 0 true", "stream 0",
                "block 3", "notification 3 true", "stream 3",
            ]
        )
    }

    @Test func identicalEvaluationsAreDeliveredOnceButANewInterfaceIsDelivered() {
        let monitor = FakePathMonitor(initialPath: Self.ethernet)
        let (manager, recorder) = makeManager(monitor)
        manager.startMonitoring()
        monitor.report(Self.ethernet)
        monitor.report(Self.ethernet)
        var otherInterface = Self.ethernet
        otherInterface.interfaceName = "eth1"
        monitor.report(otherInterface)
        monitor.report(Self.offline)
        monitor.report(Self.offline)
        flush()
        #expect(recorder.all == [.reachableViaEthernet, .reachableViaEthernet, .notReachable])
        #expect(manager.path.interfaceName == nil)
    }

    @Test func stopMonitoringKeepsTheStatusAndDeliversNothingMore() {
        let monitor = FakePathMonitor(initialPath: Self.ethernet)
        let (manager, recorder) = makeManager(monitor)
        queue.sync {
            // The callback queue is held: the first delivery is still queued when monitoring stops.
            manager.startMonitoring()
            manager.stopMonitoring()
        }
        #expect(monitor.stopCount == 1)
        // A late report from the stopped back-end, and the first delivery still queued, are both dropped.
        monitor.report(Self.offline)
        flush()
        #expect(recorder.all.isEmpty)
        #expect(manager.networkReachabilityStatus == .reachableViaEthernet)
    }

    @Test func restartingDeliversTheFirstEvaluationAgainEvenWhenUnchanged() {
        let monitor = FakePathMonitor(initialPath: Self.ethernet)
        let (manager, recorder) = makeManager(monitor)
        manager.startMonitoring()
        flush()
        manager.startMonitoring()  // stops first, then starts
        #expect(monitor.stopCount == 1)
        #expect(monitor.startCount == 2)
        flush()
        manager.stopMonitoring()
        manager.startMonitoring()
        flush()
        #expect(recorder.all == [.reachableViaEthernet, .reachableViaEthernet, .reachableViaEthernet])
    }

    @Test func aBackendThatCannotStartLeavesUnknownWithLastErrorAndIsRetried() {
        let monitor = FakePathMonitor(initialPath: Self.wifi, failingStarts: 2)
        let manager = NetworkReachabilityManager(
            monitor: monitor,
            callbackQueue: queue,
            retryInterval: .milliseconds(20)
        )
        let recorder = Recorder<NetworkReachabilityStatus>()
        manager.setReachabilityStatusChangeBlock { recorder.append($0) }
        manager.startMonitoring()
        #expect(manager.networkReachabilityStatus == .unknown)
        #expect(manager.lastError is FakePathMonitor.Failure)
        #expect(recorder.wait(forCount: 1) == [.reachableViaWiFi])
        #expect(monitor.startCount == 3)
        #expect(manager.lastError == nil)
        #expect(manager.networkReachabilityStatus == .reachableViaWiFi)
    }

    @Test func retriesEndWhenMonitoringStops() {
        let monitor = FakePathMonitor(initialPath: Self.wifi, failingStarts: .max)
        let manager = NetworkReachabilityManager(
            monitor: monitor,
            callbackQueue: queue,
            retryInterval: .milliseconds(10)
        )
        manager.startMonitoring()
        #expect(monitor.starts.wait(forCount: 3).count >= 3)
        manager.stopMonitoring()
        let startsAtStop = monitor.startCount
        // Give ten retry intervals: a retry already on its way may still start once, nothing after it.
        let later = Recorder<Int>()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { later.append(monitor.startCount) }
        #expect(later.wait(forCount: 1).first.map { $0 <= startsAtStop + 1 } == true)
        #expect(manager.networkReachabilityStatus == .unknown)
        #expect(manager.lastError is FakePathMonitor.Failure)
    }

    @Test func aBackendFailureAfterStartKeepsTheLastStatusAndSetsLastError() {
        let monitor = FakePathMonitor(initialPath: Self.ethernet)
        let (manager, recorder) = makeManager(monitor)
        manager.startMonitoring()
        let failure = NetworkReachabilityError(code: .backendFailed, message: "netlink receive failed")
        monitor.fail(failure)
        #expect(manager.networkReachabilityStatus == .reachableViaEthernet)
        let lastError = manager.lastError
        #expect(lastError.map { NetworkReachabilityError.Code.backendFailed ~= $0 } == true)
        monitor.report(Self.wifi)
        #expect(manager.lastError == nil)
        flush()
        #expect(recorder.all == [.reachableViaEthernet, .reachableViaWiFi])
    }

    @Test func ethernetCanBeReportedAsWiFiLikeAFNetworkingOnMacOS() {
        let monitor = FakePathMonitor(initialPath: Self.ethernet)
        let (manager, recorder) = makeManager(monitor)
        #expect(manager.reportsEthernetAsWiFi == false)
        manager.reportsEthernetAsWiFi = true
        manager.startMonitoring()
        #expect(manager.networkReachabilityStatus == .reachableViaWiFi)
        #expect(manager.path.status == .reachableViaWiFi)
        #expect(manager.path.interfaceType == .wiredEthernet)
        monitor.report(Self.cellular)
        #expect(manager.networkReachabilityStatus == .reachableViaWWAN)
        manager.reportsEthernetAsWiFi = false
        monitor.report(Self.ethernet)
        flush()
        #expect(recorder.all == [.reachableViaWiFi, .reachableViaWWAN, .reachableViaEthernet])
    }

    @Test func statusUpdatesStartWithTheCurrentStatusWhenMonitoring() async {
        let monitor = FakePathMonitor(initialPath: Self.wifi)
        let manager = NetworkReachabilityManager(monitor: monitor, callbackQueue: queue)
        manager.startMonitoring()
        flush()
        var iterator = manager.statusUpdates.makeAsyncIterator()
        #expect(await iterator.next() == .reachableViaWiFi)
        monitor.report(Self.offline)
        #expect(await iterator.next() == .notReachable)
    }

    @Test func statusUpdatesKeepOnlyTheNewest16() async {
        let monitor = FakePathMonitor(initialPath: Self.offline)
        let manager = NetworkReachabilityManager(monitor: monitor, callbackQueue: queue)
        let stream = manager.statusUpdates  // not monitoring: no current status first
        manager.startMonitoring()
        for index in 0..<20 {
            monitor.report(index.isMultiple(of: 2) ? Self.wifi : Self.offline)
        }
        flush()
        manager.stopMonitoring()
        var received: [NetworkReachabilityStatus] = []
        var iterator = stream.makeAsyncIterator()
        for _ in 0..<16 {
            if let status = await iterator.next() { received.append(status) }
        }
        // 21 deliveries (the initial one and 20 changes); the oldest 5 were dropped.
        let expected =
            (5..<21).map { $0 == 0 ? .notReachable : ($0 - 1).isMultiple(of: 2) ? .reachableViaWiFi : .notReachable }
            as [NetworkReachabilityStatus]
        #expect(received == expected)
    }

    @Test func streamsFinishWhenTheManagerIsDeallocated() async {
        let monitor = FakePathMonitor(initialPath: Self.wifi)
        var manager: NetworkReachabilityManager? = NetworkReachabilityManager(monitor: monitor, callbackQueue: queue)
        let stream = manager!.statusUpdates
        manager = nil
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == nil)
    }

    @Test func anUnretainedManagerStopsMonitoringInDeinit() {
        let monitor = FakePathMonitor(initialPath: Self.wifi)
        do {
            let manager = NetworkReachabilityManager(monitor: monitor, callbackQueue: queue)
            manager.startMonitoring()
        }
        flush()
        #expect(monitor.stopCount >= 1)
        monitor.report(Self.offline)  // the handler holds the manager weakly: nothing to crash into
    }

    @Test func notificationAndUserInfoKeyKeepTheirNames() {
        #expect(Notification.Name.networkReachabilityDidChange.rawValue == "tether.networking.reachability.change")
        #expect(NetworkReachabilityNotificationStatusItem == "NetworkReachabilityNotificationStatusItem")
    }

    @Test func anEmptyDomainIsAProgrammerError() async {
        await #expect(processExitsWith: .failure) {
            _ = NetworkReachabilityManager(domain: "")
        }
    }

    @Test func aUnixSocketAddressIsAProgrammerError() async {
        await #expect(processExitsWith: .failure) {
            let address = try SocketAddress(unixDomainSocketPath: "/tmp/tether.sock")
            _ = NetworkReachabilityManager(address: address)
        }
    }
}
