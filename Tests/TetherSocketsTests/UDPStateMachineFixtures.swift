import Foundation
import NIOCore

@testable import TetherSockets

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The states of the UDP machine's table, each reached by driving the machine with events (never by setting it).
enum UDPStart: String, CaseIterable, Sendable {
    case unbound, binding, idle, resolving, connecting, filtering, writing, draining, closed

    /// The machine in this state, with one IPv4 channel; packet ids and write ids are 1.
    var machine: UDPStateMachine {
        var machine = UDPStateMachine()
        func drive(_ events: UDPStateMachine.Event...) { for event in events { _ = machine.handle(event) } }
        let ready: [UDPStateMachine.Event] = [.bindAsked(families: 1), .channelActive(.inet, stillWanted: true)]
        switch self {
        case .unbound: break
        case .binding: drive(.bindAsked(families: 1))
        case .idle: for event in ready { drive(event) }
        case .resolving:
            for event in ready { drive(event) }
            drive(.sendAsked(UDPFixture.outgoing("one", tag: 1, to: .host("localhost", port: 9))))
        case .connecting:
            for event in ready { drive(event) }
            drive(.connectAsked(.address(UDPFixture.peer)))
        case .filtering:
            machine.settings.hasSendFilter = true
            for event in ready { drive(event) }
            drive(.sendAsked(UDPFixture.outgoing("one", tag: 1)))
        case .writing, .draining:
            for event in ready { drive(event) }
            drive(.sendAsked(UDPFixture.outgoing("one", tag: 1)))
            if self == .draining { drive(.closeAfterSendingAsked) }
        case .closed:
            for event in ready { drive(event) }
            drive(.closeAsked)
        }
        return machine
    }
}

/// One sample of each event the UDP machine takes.
enum UDPStimulus: String, CaseIterable, Sendable {
    case bindAsked, channelActive, channelFailed, channelClosed, familyCloseAsked, sendAsked, connectAsked
    case resolved, connectCompleted, sendFilterAnswered, writeStarted, writeCompleted, timerFired, receiveAsked
    case datagramReceived, receiveFilterAnswered, closeAfterSendingAsked, closeAsked

    var event: UDPStateMachine.Event {
        switch self {
        case .bindAsked: .bindAsked(families: 1)
        case .channelActive: .channelActive(.inet, stillWanted: true)
        case .channelFailed: .channelFailed(.inet, IOError(errnoCode: EBADF, reason: "register"))
        case .channelClosed: .channelClosed(.inet, error: nil)
        case .familyCloseAsked: .familyCloseAsked(.inet6)
        case .sendAsked: .sendAsked(UDPFixture.outgoing("two", tag: 2))
        case .connectAsked: .connectAsked(.address(UDPFixture.peer))
        case .resolved: .resolved(id: 1, .success([UDPFixture.peer]))
        case .connectCompleted: .connectCompleted(.success(()))
        case .sendFilterAnswered: .sendFilterAnswered(keep: true)
        case .writeStarted: .writeStarted(id: 1)
        case .writeCompleted: .writeCompleted(id: 1, .success(()))
        case .timerFired: .timerFired(id: 1)
        case .receiveAsked: .receiveAsked(.continuous)
        case .datagramReceived: .datagramReceived(UDPFixture.datagram("ping"))
        case .receiveFilterAnswered:
            .receiveFilterAnswered(keep: true, data: Data("ping".utf8), from: UDPFixture.peer, context: nil)
        case .closeAfterSendingAsked: .closeAfterSendingAsked
        case .closeAsked: .closeAsked
        }
    }
}

enum UDPFixture {
    // swift-format-ignore: NeverUseForceTry
    static let peer = try! SocketAddress(ipAddress: "127.0.0.1", port: 9)

    static func outgoing(
        _ text: String,
        tag: Int,
        to destination: UDPDestination? = .address(peer),
        timeout: TimeInterval = 5
    ) -> UDPOutgoing {
        UDPOutgoing(data: Data(text.utf8), destination: destination, timeout: timeout, tag: tag)
    }

    static func datagram(_ text: String, from address: SocketAddress = peer) -> AddressedEnvelope<ByteBuffer> {
        AddressedEnvelope(remoteAddress: address, data: ByteBuffer(string: text))
    }
}

extension UDPStateMachine {
    /// The state in the table's words.
    var stateName: String {
        switch state {
        case .unbound(let closing): closing ? "unbound+closing" : "unbound"
        case .binding(let pending, let closing): "binding(\(pending))" + (closing ? "+closing" : "")
        case .idle: "idle"
        case .busy(let step, let closing):
            switch (step, closing) {
            case (.writing, true): "draining"
            case (.resolving, _): "resolving" + (closing ? "+closing" : "")
            case (.connecting, _): "connecting" + (closing ? "+closing" : "")
            case (.filtering, _): "filtering" + (closing ? "+closing" : "")
            case (.writing, false): "writing"
            }
        case .closed: "closed"
        }
    }
}

extension UDPStateMachine {
    /// The state and the number of packets waiting behind the one in flight, as the table writes them.
    var tableState: String {
        sends.isEmpty ? stateName : "\(stateName) +\(sends.count) queued"
    }
}

extension UDPStateMachine.Action {
    /// The action in the table's words.
    var text: String {
        switch self {
        case .registerChannels: "register"
        case .closeChannel(let family): "close(\(family == .inet ? "v4" : "v6"))"
        case .publishFastPath: "publish"
        case .setReads(let on): on ? "reads(on)" : "reads(off)"
        case .resolve(let id, let host, let port): "resolve(\(id), \(host):\(port))"
        case .awaitResolution(let id): "await(\(id))"
        case .connect(let address): "connect(\(address.port ?? 0))"
        case .runSendFilter(let outgoing, _): "sendFilter(\(outgoing.tag))"
        case .write(let id, _, let data, _): "write(\(id), \(String(decoding: data, as: UTF8.self)))"
        case .armTimer(let id, let seconds): "arm(\(id), \(seconds)s)"
        case .cancelTimer(let id): "cancel(\(id))"
        case .runReceiveFilter(let data, _): "receiveFilter(\(String(decoding: data, as: UTF8.self)))"
        case .deliver(let delivery): delivery.text
        case .endLife(let error): error.map { "end(\($0.code))" } ?? "end"
        case .sendAfterLife(let outgoing): "sendAfterLife(\(outgoing.tag))"
        case .connectAfterLife: "connectAfterLife"
        case .shutDown: "shutDown"
        }
    }
}

extension UDPStateMachine.Delivery {
    var text: String {
        switch self {
        case .connected(let address): "connected(\(address.port ?? 0))"
        case .notConnected(let error): "notConnected(\(error.code))"
        case .sent(let tag): "sent(\(tag))"
        case .notSent(let tag, let error): "notSent(\(tag), \(error.code))"
        case .received(let data, _, let context):
            "received(\(String(decoding: data, as: UTF8.self))" + (context.map { ", \($0)" } ?? "") + ")"
        }
    }
}

extension [UDPStateMachine.Action] {
    var text: String { isEmpty ? "—" : map(\.text).joined(separator: ", ") }
}
