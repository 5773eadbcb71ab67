import Foundation
import Testing

@testable import TetherReachability

struct InterfaceClassifierTests {
    typealias Hints = InterfaceClassifier.SysfsHints

    @Test(arguments: [
        (UInt16(772), Hints?.none, NetworkPath.InterfaceType.loopback),
        (1, Hints(isWireless: true), .wifi),
        (1, Hints(deviceType: "wlan"), .wifi),
        (1, Hints(deviceType: "wwan"), .cellular),
        (519, nil, .cellular),
        (512, nil, .cellular),
        (1, nil, .wiredEthernet),
        (1, Hints(deviceType: "bridge"), .wiredEthernet),
        (65534, nil, .other),
        (776, nil, .other),
    ])
    func theHardwareTypeAndSysfsHintsGiveTheKind(type: UInt16, hints: Hints?, expected: NetworkPath.InterfaceType) {
        #expect(InterfaceClassifier.classify(hardwareType: type, isLoopback: false, hints: hints) == expected)
    }

    @Test(arguments: [
        (
            String?("wireguard"), UInt16(65534), UInt32(0x10), NetworkPath.InterfaceType.other,
            NetworkPath.InterfaceKind.vpn
        ),
        ("tun", 65534, 0x10, .other, .vpn), ("tun", 1, 0, .wiredEthernet, .vpn), ("xfrm", 65534, 0, .other, .vpn),
        ("vti", 768, 0x10, .other, .vpn), ("gre", 778, 0x10, .other, .tunnel), ("vxlan", 1, 0, .wiredEthernet, .tunnel),
        (nil, 776, 0x10, .other, .tunnel), (nil, 65534, 0x10, .other, .vpn), (nil, 65534, 0, .other, .other),
        ("veth", 1, 0, .wiredEthernet, .wiredEthernet), ("bridge", 1, 0, .wiredEthernet, .wiredEthernet),
        (nil, 512, 0x10, .cellular, .cellular), (nil, 772, 0x8, .loopback, .loopback), (nil, 1, 0, .wifi, .wifi),
    ])
    func theDriverHardwareTypeAndFlagsTellVPNsAndTunnels(
        driver: String?,
        hardwareType: UInt16,
        flags: UInt32,
        type: NetworkPath.InterfaceType,
        expected: NetworkPath.InterfaceKind
    ) {
        let link = RoutingState.Link(index: 5, name: "x0", flags: flags, hardwareType: hardwareType, driver: driver)
        #expect(InterfaceClassifier.kind(of: link, type: type) == expected)
    }

    @Test(arguments: [
        (NetworkPath.InterfaceType.wifi, NetworkReachabilityStatus.reachableViaWiFi),
        (.cellular, .reachableViaWWAN), (.wiredEthernet, .reachableViaEthernet), (.loopback, .reachableViaWiFi),
        (.other, .reachableViaWiFi),
    ])
    func eachKindHasAFNetworkingsStatus(type: NetworkPath.InterfaceType, status: NetworkReachabilityStatus) {
        #expect(type.reachableStatus == status)
    }

    /// A fake `/sys/class/net` with a Wi-Fi card, a modem, a wired card and a device of another namespace.
    func makeSysfs() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tether-sysfs-\(UUID().uuidString)")
        func device(_ name: String, index: Int, uevent: String, wireless: Bool = false) throws {
            let folder = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try "\(index)\n".write(to: folder.appendingPathComponent("ifindex"), atomically: true, encoding: .utf8)
            try uevent.write(to: folder.appendingPathComponent("uevent"), atomically: true, encoding: .utf8)
            if wireless {
                try FileManager.default.createDirectory(
                    at: folder.appendingPathComponent("wireless"),
                    withIntermediateDirectories: true
                )
            }
        }
        try device("wlan0", index: 3, uevent: "DEVTYPE=wlan\nINTERFACE=wlan0\nIFINDEX=3\n", wireless: true)
        try device("wwan0", index: 4, uevent: "DEVTYPE=wwan\nINTERFACE=wwan0\nIFINDEX=4\n")
        try device("eth0", index: 2, uevent: "INTERFACE=eth0\nIFINDEX=2\n")
        return root
    }

    func link(_ name: String, _ index: Int32, type: UInt16 = 1) -> RoutingState.Link {
        RoutingState.Link(index: index, name: name, flags: RoutingState.Link.flagUp, hardwareType: type)
    }

    @Test func sysfsTellsWiFiAndCellularFromWiredEthernet() throws {
        let root = try makeSysfs()
        defer { try? FileManager.default.removeItem(at: root) }
        let classifier = InterfaceClassifier(sysfsRoot: root.path)
        #expect(classifier.classify(link("wlan0", 3)) == .wifi)
        #expect(classifier.classify(link("wwan0", 4)) == .cellular)
        #expect(classifier.classify(link("eth0", 2)) == .wiredEthernet)
        #expect(classifier.classify(link("lo", 1, type: 772)) == .loopback)
        #expect(classifier.classify(link("tun0", 9, type: 65534)) == .other)
    }

    @Test func sysfsOfAnotherNamespaceIsNotBelieved() throws {
        let root = try makeSysfs()
        defer { try? FileManager.default.removeItem(at: root) }
        let classifier = InterfaceClassifier(sysfsRoot: root.path)
        // Same name, other index: sysfs shows another namespace's wlan0.
        #expect(classifier.hints(for: link("wlan0", 7)) == nil)
        #expect(classifier.classify(link("wlan0", 7)) == .wiredEthernet)
        #expect(classifier.hints(for: link("../wlan0", 3)) == nil)
    }
}
