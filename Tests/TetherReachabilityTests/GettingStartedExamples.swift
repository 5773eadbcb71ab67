import Dispatch
import Foundation
import NIOCore
import Testing
import TetherReachability
import TetherTestSupport

// The code of the article "Getting started" (TetherReachability/Docs.docc/GettingStarted.md). Each Swift block of
// the article appears here line for line (`everySwiftBlockOfTheArticleIsCodeOfThisFile` checks it); the tests below
// run them against the kernel's routing table (loopback) and a scripted back-end.

// MARK: - Watch the network

func startWatching(onChange: @escaping @Sendable (NetworkReachabilityStatus) -> Void) -> NetworkReachabilityManager {
    let manager = NetworkReachabilityManager(callbackQueue: DispatchQueue(label: "reachability"))
    manager.setReachabilityStatusChangeBlock(onChange)
    manager.startMonitoring()
    // Already evaluated: manager.networkReachabilityStatus is not .unknown unless the back-end failed.
    return manager
}

// MARK: - Watch an address or a host name

func makeTargetedManagers(queue: DispatchQueue) throws -> [NetworkReachabilityManager] {
    let address = try SocketAddress(ipAddress: "127.0.0.1", port: 0)  // the port is ignored
    return [
        NetworkReachabilityManager(address: address, callbackQueue: queue),
        NetworkReachabilityManager(domain: "localhost", callbackQueue: queue),
    ]
}

// MARK: - Read the status and the path

func describePath(of manager: NetworkReachabilityManager) -> String {
    let path = manager.path
    guard let name = path.interfaceName, let type = path.interfaceType else {
        return manager.localizedNetworkReachabilityStatusString()  // "Not Reachable", "Unknown"
    }
    let cost = path.isExpensive ? ", expensive" : ""
    return "\(path.status) (\(name), \(type.rawValue)\(cost))"  // "Reachable via WiFi (lo, loopback)"
}

// MARK: - Wait with async/await

func waitUntilReachable(_ manager: NetworkReachabilityManager) async -> NetworkReachabilityStatus? {
    for await status in manager.statusUpdates {
        switch status {
        case .reachableViaWWAN, .reachableViaWiFi, .reachableViaEthernet: return status
        case .notReachable, .unknown: continue
        }
    }
    return nil  // the stream ended
}

// MARK: - Observe the notification

func observeReachability(
    of manager: NetworkReachabilityManager,
    onStatus: @escaping @Sendable (NetworkReachabilityStatus) -> Void
) -> any NSObjectProtocol {
    NotificationCenter.default.addObserver(forName: .networkReachabilityDidChange, object: manager, queue: nil) {
        notification in
        guard let raw = notification.userInfo?[NetworkReachabilityNotificationStatusItem] as? Int,
            let status = NetworkReachabilityStatus(rawValue: raw)
        else { return }
        onStatus(status)
    }
}

// MARK: - When the back-end fails

func reachabilitySummary(_ manager: NetworkReachabilityManager) -> String {
    if manager.networkReachabilityStatus == .unknown, let error = manager.lastError {
        return "cannot tell: \(error)"  // retried every 5 seconds while monitoring
    }
    return manager.localizedNetworkReachabilityStatusString()
}

// MARK: - Test your code with a scripted back-end

final class ScriptedPathMonitor: NetworkPathMonitoring, @unchecked Sendable {
    private let lock = NSLock()
    private let initialPath: NetworkPath
    private var handler: (@Sendable (NetworkPath) -> Void)?  // guarded by lock

    init(initialPath: NetworkPath) {
        self.initialPath = initialPath
    }

    func start(_ handler: @escaping @Sendable (NetworkPath) -> Void) throws {
        lock.lock()
        self.handler = handler
        lock.unlock()
        handler(initialPath)
    }

    func stop() {
        lock.lock()
        handler = nil
        lock.unlock()
    }

    func report(_ path: NetworkPath) {
        lock.lock()
        let handler = self.handler
        lock.unlock()
        handler?(path)
    }
}

// MARK: - Tell a VPN from Wi-Fi, and see the route

func describeRoute(of manager: NetworkReachabilityManager) -> String {
    let path = manager.path
    guard let name = path.interfaceName, let kind = path.interfaceKind else { return "no route" }
    let vpn = path.isVPN ? " (VPN)" : ""
    let route = path.route.map { ", \($0)" } ?? ""  // ", default via 10.0.0.1 table 254 metric 100 rule 32766"
    return "\(name): \(kind)\(vpn)\(route)"  // "lo: loopback, 127.0.0.1/32 table 255 metric 0 rule 0"
}

// MARK: - Wait for connectivity

func connectWhenReachable(host: String) async throws -> NetworkPath {
    // Returns at once when a route exists; throws NetworkReachabilityError.Code.connectivityTimedOut otherwise.
    try await NetworkReachabilityManager.waitForConnectivity(to: host, timeout: .seconds(30))
}

// MARK: - Calm a flapping link

func makeCalmManager(queue: DispatchQueue) -> NetworkReachabilityManager {
    let manager = NetworkReachabilityManager(callbackQueue: queue)
    manager.debounceInterval = .seconds(2)  // a link that flaps within two seconds makes one callback, or none
    return manager
}

// MARK: - Test support

/// Paths for the scripted back-end.
enum ScriptedPaths {
    static let offline = NetworkPath(status: .notReachable)
    static let wifi = NetworkPath(status: .reachableViaWiFi, interfaceName: "wlan0", interfaceType: .wifi)
    static let cellular = NetworkPath(
        status: .reachableViaWWAN,
        interfaceName: "wwan0",
        interfaceType: .cellular,
        isExpensive: true
    )
}

/// A back-end that cannot start, like a sandbox that refuses netlink sockets.
private struct RefusedMonitor: NetworkPathMonitoring {
    func start(_ handler: @escaping @Sendable (NetworkPath) -> Void) throws {
        throw NetworkReachabilityError(code: .backendUnavailable, message: "netlink refused")
    }

    func stop() {}
}

// MARK: - Tests

@Suite("The article \"Getting started\" of TetherReachability: its code compiles and runs", .timeLimit(.minutes(1)))
struct ReachabilityGettingStartedExamples {
    @Test("every Swift block of the article is code of this file, line for line")
    func everySwiftBlockOfTheArticleIsCodeOfThisFile() throws {
        let article = "Sources/TetherReachability/Docs.docc/GettingStarted.md"
        #expect(try ArticleSnippets.checkedBlocks(ofArticle: article).count == 10)
        let missing = try ArticleSnippets.blocksMissing(
            fromArticle: article,
            inFiles: ["Tests/TetherReachabilityTests/GettingStartedExamples.swift"]
        )
        #expect(missing.isEmpty, "not in GettingStartedExamples.swift:\n\(missing.joined(separator: "\n---\n"))")
    }

    @Test("the any-route manager has a status when startMonitoring returns, and its block gets the same one")
    func anyRouteManagerEvaluatesAtOnce() {
        let statuses = Recorder<NetworkReachabilityStatus>()
        let manager = startWatching(onChange: statuses.append)
        defer { manager.stopMonitoring() }
        #expect(manager.networkReachabilityStatus != .unknown || manager.lastError != nil)
        #expect(statuses.wait(forCount: 1).first == manager.networkReachabilityStatus)
    }

    @Test("the loopback address and localhost are reachable via lo, which counts as WiFi")
    func loopbackTargetsAreReachable() throws {
        let managers = try makeTargetedManagers(queue: DispatchQueue(label: "tests.gs.targets"))
        for manager in managers {
            manager.startMonitoring()
            #expect(manager.networkReachabilityStatus == .reachableViaWiFi)
            #expect(manager.path.interfaceType == .loopback)
            #expect(describePath(of: manager) == "Reachable via WiFi (lo, loopback)")
            manager.stopMonitoring()
        }
    }

    #if os(Linux)
    @Test("describeRoute names the loopback route of the local table for the loopback address")
    func describeRouteOfTheLoopbackAddress() throws {
        let manager = try makeTargetedManagers(queue: DispatchQueue(label: "tests.gs.route"))[0]
        manager.startMonitoring()
        defer { manager.stopMonitoring() }
        #expect(describeRoute(of: manager) == "lo: loopback, 127.0.0.1/32 table 255 metric 0 rule 0")
    }
    #endif

    @Test("connectWhenReachable returns the loopback path for 127.0.0.1")
    func connectWhenReachableReturnsAtOnce() async throws {
        let path = try await connectWhenReachable(host: "127.0.0.1")
        #expect(path.interfaceName == "lo")
    }

    @Test("makeCalmManager sets a two-second window")
    func calmManagerHasItsWindow() {
        #expect(makeCalmManager(queue: DispatchQueue(label: "tests.gs.calm")).debounceInterval == .seconds(2))
    }

    @Test("describePath names the status alone without an interface, and marks an expensive path")
    func describePathWithoutAnInterface() {
        let monitor = ScriptedPathMonitor(initialPath: ScriptedPaths.offline)
        let manager = NetworkReachabilityManager(monitor: monitor, callbackQueue: DispatchQueue(label: "tests.gs.p"))
        #expect(describePath(of: manager) == "Unknown")
        manager.startMonitoring()
        #expect(describePath(of: manager) == "Not Reachable")
        monitor.report(ScriptedPaths.cellular)
        #expect(describePath(of: manager) == "Reachable via WWAN (wwan0, cellular, expensive)")
    }

    @Test("waitUntilReachable skips Not Reachable and returns the first reachable status")
    func waitingForTheNetwork() async {
        let monitor = ScriptedPathMonitor(initialPath: ScriptedPaths.offline)
        let manager = NetworkReachabilityManager(monitor: monitor, callbackQueue: DispatchQueue(label: "tests.gs.w"))
        manager.startMonitoring()
        async let reachable = waitUntilReachable(manager)
        monitor.report(ScriptedPaths.wifi)
        #expect(await reachable == .reachableViaWiFi)
    }

    @Test("the notification carries the manager's first status for the loopback address")
    func notificationForOneManager() throws {
        let queue = DispatchQueue(label: "tests.gs.notification")
        let loopback = try SocketAddress(ipAddress: "127.0.0.1", port: 0)
        let manager = NetworkReachabilityManager(address: loopback, callbackQueue: queue)
        let statuses = Recorder<NetworkReachabilityStatus>()
        let observer = observeReachability(of: manager, onStatus: statuses.append)
        defer { NotificationCenter.default.removeObserver(observer) }
        manager.startMonitoring()
        defer { manager.stopMonitoring() }
        #expect(statuses.wait(forCount: 1) == [.reachableViaWiFi])
    }

    @Test("the summary explains a back-end that cannot start, and names the status otherwise")
    func summaryExplainsAFailedBackEnd() throws {
        let failing = NetworkReachabilityManager(monitor: RefusedMonitor(), callbackQueue: DispatchQueue(label: "t"))
        failing.startMonitoring()
        defer { failing.stopMonitoring() }
        #expect(reachabilitySummary(failing).hasPrefix("cannot tell: NetworkReachabilityError.backendUnavailable"))
        let loopback = NetworkReachabilityManager(
            address: try SocketAddress(ipAddress: "127.0.0.1", port: 0),
            callbackQueue: DispatchQueue(label: "tests.gs.summary")
        )
        loopback.startMonitoring()
        defer { loopback.stopMonitoring() }
        #expect(reachabilitySummary(loopback) == "Reachable via WiFi")
    }

    @Test("a scripted back-end drives the block: changes delivered once each, nothing after stopMonitoring")
    func scriptedBackEndDrivesTheBlock() {
        let queue = DispatchQueue(label: "tests.gs.scripted")
        let monitor = ScriptedPathMonitor(initialPath: ScriptedPaths.offline)
        let manager = NetworkReachabilityManager(monitor: monitor, callbackQueue: queue)
        let statuses = Recorder<NetworkReachabilityStatus>()
        manager.setReachabilityStatusChangeBlock(statuses.append)
        manager.startMonitoring()
        monitor.report(ScriptedPaths.wifi)
        monitor.report(ScriptedPaths.wifi)  // the same path again: not delivered
        monitor.report(ScriptedPaths.cellular)
        queue.sync {}  // every delivery enqueued so far has run
        #expect(statuses.all == [.notReachable, .reachableViaWiFi, .reachableViaWWAN])
        manager.stopMonitoring()
        monitor.report(ScriptedPaths.offline)  // after stop: the monitor dropped its handler
        queue.sync {}
        #expect(statuses.all == [.notReachable, .reachableViaWiFi, .reachableViaWWAN])
        #expect(manager.networkReachabilityStatus == .reachableViaWWAN)  // kept after stopMonitoring
        #expect(manager.path.isExpensive)
    }
}
