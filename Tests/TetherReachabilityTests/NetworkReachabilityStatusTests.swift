import Testing

@testable import TetherReachability

struct NetworkReachabilityStatusTests {
    @Test(arguments: [
        (NetworkReachabilityStatus.unknown, -1, "Unknown"), (.notReachable, 0, "Not Reachable"),
        (.reachableViaWWAN, 1, "Reachable via WWAN"), (.reachableViaWiFi, 2, "Reachable via WiFi"),
        (.reachableViaEthernet, 3, "Reachable via Ethernet"),
    ])
    func rawValuesAndStringsAreAFNetworkings(status: NetworkReachabilityStatus, rawValue: Int, text: String) {
        #expect(status.rawValue == rawValue)
        #expect(status.localizedDescription == text)
        #expect(status.description == text)
        #expect(NetworkReachabilityStatus(rawValue: rawValue) == status)
    }

    @Test func thereAreFiveStatuses() {
        #expect(NetworkReachabilityStatus.allCases.count == 5)
    }
}

struct NetworkPathTests {
    @Test func ethernetIsReportedAsWiFiOnlyWhenAsked() {
        let ethernet = NetworkPath(status: .reachableViaEthernet, interfaceName: "eth0", interfaceType: .wiredEthernet)
        #expect(ethernet.reportingEthernetAsWiFi().status == .reachableViaWiFi)
        #expect(ethernet.reportingEthernetAsWiFi().interfaceType == .wiredEthernet)
        let cellular = NetworkPath(status: .reachableViaWWAN, interfaceName: "wwan0", interfaceType: .cellular)
        #expect(cellular.reportingEthernetAsWiFi() == cellular)
    }

    @Test func aReachablePathOverCellularIsExpensive() {
        let wwan0 = RoutingState.Link(index: 3, name: "wwan0", flags: 0x41, hardwareType: 519)
        let eth0 = RoutingState.Link(index: 2, name: "eth0", flags: 0x41, hardwareType: 1)
        let path = NetworkPath.reachable(
            via: wwan0,
            type: .cellular,
            route: nil,
            supportsIPv4: true,
            supportsIPv6: false
        )
        #expect(path.status == .reachableViaWWAN && path.isExpensive)
        #expect(path.interfaceKind == .cellular)
        #expect(
            !NetworkPath.reachable(via: eth0, type: .wiredEthernet, route: nil, supportsIPv4: true, supportsIPv6: true)
                .isExpensive
        )
    }

    @Test func defaultsDescribeNoInterface() {
        let path = NetworkPath(status: .notReachable)
        #expect(path.interfaceName == nil && path.interfaceType == nil)
        #expect(!path.isExpensive && !path.supportsIPv4 && !path.supportsIPv6)
    }

    @Test func exactlyTheThreeReachableStatusesAreReachable() {
        let reachable = NetworkReachabilityStatus.allCases.filter(\.isReachable)
        #expect(reachable == [.reachableViaWWAN, .reachableViaWiFi, .reachableViaEthernet])
    }
}
