import Dispatch
import Foundation
import NIOCore
import Testing
import TetherReachability
import TetherTestSupport

// The "after" code of the article "From AFNetworkReachabilityManager"
// (TetherReachability/Docs.docc/PortingFromAFNetworkReachabilityManager.md). Each Swift block of the article that is
// not marked **Before** appears here line for line (`everyAfterBlockOfTheArticleIsCodeOfThisFile` checks it); the
// tests below run them against the kernel's routing table and a scripted back-end.

// MARK: - The status block

enum DownloadPolicy: Sendable, Equatable {
    case pauseLargeDownloads, resume, showOffline, wait
}

func downloadPolicy(for status: NetworkReachabilityStatus) -> DownloadPolicy {
    switch status {
    case .reachableViaWWAN: return .pauseLargeDownloads
    case .reachableViaWiFi, .reachableViaEthernet: return .resume  // Δ: Ethernet has a case of its own
    case .notReachable: return .showOffline
    case .unknown: return .wait
    }
}

func watchForDownloads(onPolicy: @escaping @Sendable (DownloadPolicy) -> Void) -> NetworkReachabilityManager {
    let manager = NetworkReachabilityManager(callbackQueue: DispatchQueue(label: "downloads.reachability"))
    manager.setReachabilityStatusChangeBlock { status in onPolicy(downloadPolicy(for: status)) }
    manager.startMonitoring()
    return manager  // keep it: a manager nobody retains stops when it is deallocated
}

func macOSStyleManager(queue: DispatchQueue) -> NetworkReachabilityManager {
    let manager = NetworkReachabilityManager(callbackQueue: queue)
    manager.reportsEthernetAsWiFi = true  // wired Ethernet reads .reachableViaWiFi, as AFNetworking on macOS
    return manager
}

// MARK: - Checking right after starting

func isReachableNow(host: String, queue: DispatchQueue) -> (reachable: Bool, manager: NetworkReachabilityManager) {
    let manager = NetworkReachabilityManager(domain: host, callbackQueue: queue)
    manager.startMonitoring()  // Δ: evaluates before it returns
    return (manager.isReachable, manager)
}

// MARK: - Managers for an address

func managerForAddress(_ ip: String, queue: DispatchQueue) throws -> NetworkReachabilityManager {
    let address = try SocketAddress(ipAddress: ip, port: 0)  // IPv4 or IPv6; the port is ignored
    return NetworkReachabilityManager(address: address, callbackQueue: queue)
}

// MARK: - The notification

func observeStatusChanges(
    onStatus: @escaping @Sendable (NetworkReachabilityStatus) -> Void
) -> any NSObjectProtocol {
    NotificationCenter.default.addObserver(forName: .networkReachabilityDidChange, object: nil, queue: nil) {
        notification in
        guard let item = notification.userInfo?[NetworkReachabilityNotificationStatusItem] as? Int,
            let status = NetworkReachabilityStatus(rawValue: item)
        else { return }
        onStatus(status)
    }
}

// MARK: - Waiting for connectivity instead of polling

func uploadWhenReachable(host: String, upload: @Sendable () async throws -> Void) async throws {
    // Δ: a typed error (NetworkReachabilityError.Code.connectivityTimedOut) when no route appears in time.
    _ = try await NetworkReachabilityManager.waitForConnectivity(to: host, timeout: .seconds(60))
    try await upload()
}

// MARK: - A stream instead of a block

func syncWhenReachable(_ manager: NetworkReachabilityManager, sync: @Sendable () async -> Void) async {
    for await status in manager.statusUpdates where status != .notReachable && status != .unknown {
        await sync()
    }
}

// MARK: - Tests

@Suite(
    "The article \"From AFNetworkReachabilityManager\": its after examples compile and run",
    .timeLimit(.minutes(1))
)
struct ReachabilityPortingGuideExamples {
    @Test("every after block of the article is code of this file, line for line")
    func everyAfterBlockOfTheArticleIsCodeOfThisFile() throws {
        let article = "Sources/TetherReachability/Docs.docc/PortingFromAFNetworkReachabilityManager.md"
        #expect(try ArticleSnippets.checkedBlocks(ofArticle: article).count == 7)
        let missing = try ArticleSnippets.blocksMissing(
            fromArticle: article,
            inFiles: ["Tests/TetherReachabilityTests/PortingGuideExamples.swift"]
        )
        #expect(missing.isEmpty, "not in PortingGuideExamples.swift:\n\(missing.joined(separator: "\n---\n"))")
    }

    @Test("uploadWhenReachable uploads once the loopback address is reachable")
    func uploadWhenReachableUploads() async throws {
        let uploads = Recorder<Int>()
        try await uploadWhenReachable(host: "127.0.0.1") { uploads.append(1) }
        #expect(uploads.all == [1])
    }

    @Test("each status has its policy, and the watcher's first policy is the one for the evaluated status")
    func downloadPolicies() {
        let all = NetworkReachabilityStatus.allCases.map(downloadPolicy)
        #expect(all == [.wait, .showOffline, .pauseLargeDownloads, .resume, .resume])
        let policies = Recorder<DownloadPolicy>()
        let manager = watchForDownloads(onPolicy: policies.append)
        defer { manager.stopMonitoring() }
        #expect(policies.wait(forCount: 1).first == downloadPolicy(for: manager.networkReachabilityStatus))
    }

    @Test("a macOS-style manager never reports Ethernet, and reports an Ethernet path as WiFi")
    func ethernetReadsAsWiFi() {
        let manager = macOSStyleManager(queue: DispatchQueue(label: "tests.pg.macos"))
        manager.startMonitoring()
        defer { manager.stopMonitoring() }
        #expect(manager.reportsEthernetAsWiFi)
        #expect(manager.networkReachabilityStatus != .reachableViaEthernet)
        if manager.path.interfaceType == .wiredEthernet {
            #expect(manager.networkReachabilityStatus == .reachableViaWiFi)
        }
    }

    @Test("localhost is reachable as soon as startMonitoring returned")
    func reachableRightAfterStarting() {
        let (reachable, manager) = isReachableNow(host: "localhost", queue: DispatchQueue(label: "tests.pg.now"))
        defer { manager.stopMonitoring() }
        #expect(reachable)
        #expect(manager.path.interfaceName == "lo")
    }

    @Test("an address manager reaches the loopback address; a bad address throws")
    func addressManagers() throws {
        let manager = try managerForAddress("127.0.0.1", queue: DispatchQueue(label: "tests.pg.address"))
        manager.startMonitoring()
        defer { manager.stopMonitoring() }
        #expect(manager.isReachableViaWiFi)
        #expect(throws: (any Error).self) { try managerForAddress("not an address", queue: .global()) }
    }

    @Test("the notification observer hears a manager's status by its Int raw value")
    func notificationObserver() {
        let statuses = Recorder<NetworkReachabilityStatus>()
        let observer = observeStatusChanges(onStatus: statuses.append)
        defer { NotificationCenter.default.removeObserver(observer) }
        // Other tests' managers post too (object: nil hears them all): WWAN comes only from this one.
        let monitor = ScriptedPathMonitor(initialPath: ScriptedPaths.cellular)
        let manager = NetworkReachabilityManager(monitor: monitor, callbackQueue: DispatchQueue(label: "tests.pg.n"))
        manager.startMonitoring()
        defer { manager.stopMonitoring() }
        var heard = statuses.wait(forCount: 1)
        while !heard.contains(.reachableViaWWAN) {
            let more = statuses.wait(forCount: heard.count + 1)
            if more.count == heard.count { break }  // nothing new within the wait's timeout
            heard = more
        }
        #expect(heard.contains(.reachableViaWWAN))
    }

    @Test("syncWhenReachable syncs when the network comes back, not while it is away")
    func syncOnReconnect() async {
        let monitor = ScriptedPathMonitor(initialPath: ScriptedPaths.offline)
        let manager = NetworkReachabilityManager(monitor: monitor, callbackQueue: DispatchQueue(label: "tests.pg.s"))
        manager.startMonitoring()
        let (syncs, continuation) = AsyncStream<Void>.makeStream()
        let syncing = Task { await syncWhenReachable(manager) { continuation.yield() } }
        defer { syncing.cancel() }
        monitor.report(ScriptedPaths.wifi)
        var iterator = syncs.makeAsyncIterator()
        #expect(await iterator.next() != nil)
        #expect(manager.isReachable)
    }
}
