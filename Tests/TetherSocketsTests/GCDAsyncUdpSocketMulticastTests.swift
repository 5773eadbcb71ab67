import Dispatch
import Foundation
import NIOCore
import Testing
import TetherSockets

/// Broadcast and multicast stay on the loopback interface: a broadcast to 127.255.255.255 is routed to `lo`; lo has
/// no MULTICAST flag and the only multicast route is the default one through eth0, so every sender names the
/// interface (IP_MULTICAST_IF 127.0.0.1 / IPV6_MULTICAST_IF lo) and uses a group that needs no route: 224.0.0.0/24
/// (link-local) for IPv4. IP_MULTICAST_LOOP is on by default, so a member on the same host receives. Members always
/// join on a named interface (a join on "any" would announce the group on eth0). IPv6: joining ff01::/16
/// (interface-local) on lo works, but sending to it fails with ENETUNREACH (no route without a multicast-capable
/// interface), so the IPv6 test checks join/leave and a per-send failure, not delivery; delivery over IPv6 would need
/// a network namespace with a multicast-capable interface (veth), which these tests do not create.
@Suite(.timeLimit(.minutes(1)))
struct GCDAsyncUdpSocketMulticastTests {
    static let groups: [(group: String, interface: String, loopback: String)] = [
        ("224.0.0.199", "127.0.0.1", "127.0.0.1")
    ]

    private func makeSender(group: String, interface: String) throws -> (GCDAsyncUdpSocket, UdpRecorder) {
        let recorder = UdpRecorder(label: "multicast-sender")
        let sender = recorder.makeSocket()
        if group.contains(":") {
            sender.setIPv4Enabled(false)
            try sender.sendIPv6Multicast(onInterface: interface)
        } else {
            sender.setIPv6Enabled(false)
            try sender.sendIPv4Multicast(onInterface: interface)
        }
        return (sender, recorder)
    }

    @Test("a member that joined on lo receives the group's datagrams; after leaving it does not", arguments: groups)
    func joinReceiveLeave(group: String, interface: String, loopback: String) async throws {
        let memberRecorder = UdpRecorder(label: "member")
        let member = memberRecorder.makeSocket()
        try member.bind(toPort: 0)
        try member.joinMulticastGroup(group, onInterface: interface)
        // Joining a group of one family closes the other family's socket.
        #expect(group.contains(":") ? !member.isIPv4() : !member.isIPv6())
        try member.beginReceiving()
        let port = member.localPort()

        let (sender, senderRecorder) = try makeSender(group: group, interface: interface)
        sender.send(Data("to the group".utf8), toHost: group, port: port, withTimeout: 5, tag: 1)
        try await senderRecorder.waitForSendResults([1])
        #expect(senderRecorder.events == [.sent(tag: 1)])
        try await memberRecorder.waitForReceived(1)
        #expect(memberRecorder.receivedData.first == Data("to the group".utf8))

        try member.leaveMulticastGroup(group, onInterface: interface)
        let before = memberRecorder.receivedData.count
        sender.send(Data("after leaving".utf8), toHost: group, port: port, withTimeout: 5, tag: 2)
        // A unicast marker afterwards: anything the group send could deliver is queued before it.
        sender.send(Data("marker".utf8), toHost: loopback, port: port, withTimeout: 5, tag: 3)
        try await memberRecorder.waitForReceived(before + 1)
        #expect(memberRecorder.receivedData.last == Data("marker".utf8))
        #expect(!memberRecorder.receivedData.contains(Data("after leaving".utf8)))
        sender.close()
        member.close()
    }

    @Test("the async face joins and leaves a group on lo", arguments: [("224.0.0.198", "127.0.0.1", "127.0.0.1")])
    func asyncFaceJoinAndLeave(group: String, interface: String, loopback: String) async throws {
        let member = try await UDPCollectingPeer(host: group.contains(":") ? "::" : "0.0.0.0")
        try await member.socket.joinMulticastGroup(group, interface: interface)
        let (sender, senderRecorder) = try makeSender(group: group, interface: interface)
        let port = UInt16(member.port)
        sender.send(Data("to the group".utf8), toHost: group, port: port, withTimeout: 5, tag: 1)
        try await member.wait(for: 1)
        #expect(member.payloads.first == Data("to the group".utf8))
        try await member.socket.leaveMulticastGroup(group, interface: interface)
        let before = member.payloads.count
        sender.send(Data("after leaving".utf8), toHost: group, port: port, withTimeout: 5, tag: 2)
        sender.send(Data("marker".utf8), toHost: loopback, port: port, withTimeout: 5, tag: 3)
        try await member.wait(for: before + 1)
        #expect(member.payloads.last == Data("marker".utf8))
        #expect(!member.payloads.contains(Data("after leaving".utf8)))
        try await senderRecorder.waitForSendResults([1, 2, 3])
        sender.close()
        await member.stop()
    }

    @Test("IPv6: both faces join and leave an interface-local group on lo; a send to it fails alone (ENETUNREACH)")
    func ipv6JoinLeaveAndUnroutableSend() async throws {
        let group = "ff01::1:199"
        let recorder = UdpRecorder(label: "member6")
        let member = recorder.makeSocket()
        try member.bind(toPort: 0)
        try member.joinMulticastGroup(group, onInterface: "lo")
        #expect(!member.isIPv4() && member.isIPv6())
        try member.leaveMulticastGroup(group, onInterface: "lo")
        do {
            try member.leaveMulticastGroup(group, onInterface: "lo")
            Issue.record("leaving a group not joined succeeded")
        } catch let error as GCDAsyncUdpSocketError {
            #expect(error.domain == .posix)
        }
        member.close()

        let asyncMember = try await UDPCollectingPeer(host: "::")
        try await asyncMember.socket.joinMulticastGroup(group, interface: "lo")
        try await asyncMember.socket.leaveMulticastGroup(group, interface: "lo")

        let (sender, senderRecorder) = try makeSender(group: group, interface: "lo")
        sender.send(Data("to the group".utf8), toHost: group, port: UInt16(asyncMember.port), withTimeout: 5, tag: 1)
        sender.send(Data("unicast".utf8), toHost: "::1", port: UInt16(asyncMember.port), withTimeout: 5, tag: 2)
        try await senderRecorder.waitForSendResults([1, 2])
        #expect(senderRecorder.events == [.notSent(tag: 1, code: 5, errno: .ENETUNREACH), .sent(tag: 2)])
        try await asyncMember.wait(for: 1)
        #expect(asyncMember.payloads == [Data("unicast".utf8)])
        sender.close()
        await asyncMember.stop()
    }

    @Test("broadcast needs enableBroadcast: refused before (the socket stays open), delivered after")
    func broadcastOnLoopback() async throws {
        let receiver = try await UDPCollectingPeer(host: "0.0.0.0")
        let recorder = UdpRecorder(label: "broadcaster")
        let socket = recorder.makeSocket()
        try socket.bind(toPort: 0, interface: "127.0.0.1")
        let port = UInt16(receiver.port)
        socket.send(Data("denied".utf8), toHost: "127.255.255.255", port: port, withTimeout: 5, tag: 1)
        try await recorder.waitForSendResults([1])
        #expect(recorder.events == [.notSent(tag: 1, code: 5, errno: .EACCES)])
        #expect(!socket.isClosed())
        try socket.enableBroadcast(true)
        socket.send(Data("to everyone".utf8), toHost: "127.255.255.255", port: port, withTimeout: 5, tag: 2)
        try await recorder.waitForSendResults([2])
        #expect(recorder.events.last == .sent(tag: 2))
        try await receiver.wait(for: 1)
        #expect(receiver.payloads == [Data("to everyone".utf8)])
        socket.close()
        await receiver.stop()
    }
}
