import Foundation
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension UDPStateMachine {
    // MARK: packets

    /// The largest datagram IPv4 carries.
    static let maxIPv4Datagram = 65_507

    mutating func queue(_ packet: UDPSendQueue.Packet) -> [Action] {
        // A packet asked for after the life ended goes to a new life (the original's next send or connect opened new
        // sockets).
        if isClosedState {
            switch packet {
            case .send(let outgoing): return [.sendAfterLife(outgoing)]
            case .connect(let target): return [.connectAfterLife(target)]
            }
        }
        let entry = sends.append(packet)
        var actions: [Action] = []
        if let lookup = entry.lookup { actions.append(.resolve(id: entry.id, host: lookup.host, port: lookup.port)) }
        if case .idle = state { actions += next(closing: false) }
        return actions
    }

    /// Starts the next packet, or settles: idle, or ended when closing after sends.
    mutating func next(closing: Bool) -> [Action] {
        guard let entry = sends.popFirst() else {
            if closing {
                state = .closed
                return [.publishFastPath, .endLife(nil)]
            }
            state = .idle
            return []
        }
        if entry.lookup != nil {
            state = .busy(.resolving(entry), closesAfterSending: closing)
            return [.awaitResolution(id: entry.id)]
        }
        return begin(entry, resolved: nil, closing: closing)
    }

    /// The packet's callback, then the next packet.
    private mutating func finish(_ delivery: Delivery, closing: Bool) -> [Action] {
        [.deliver(delivery)] + next(closing: closing)
    }

    private var isClosedState: Bool {
        if case .closed = state { return true }
        return false
    }

    mutating func resolved(_ id: UInt64, _ result: Result<[SocketAddress], any Error>) -> [Action] {
        guard case .busy(.resolving(let entry), let closing) = state, entry.id == id else { return [] }
        return begin(entry, resolved: result, closing: closing)
    }

    private mutating func begin(
        _ entry: UDPSendQueue.Entry,
        resolved: Result<[SocketAddress], any Error>?,
        closing: Bool
    ) -> [Action] {
        switch entry.packet {
        case .connect(let target):
            let address: SocketAddress
            do {
                switch target {
                case .address(let given): address = try choose(from: [given])
                case .host: address = try choose(from: resolved?.get() ?? [])
                }
            } catch {
                return finish(.notConnected(.wrapping(error, function: "connect")), closing: closing)
            }
            state = .busy(.connecting(address), closesAfterSending: closing)
            return [.connect(address)]
        case .send(let outgoing):
            let address: SocketAddress
            do {
                address = try destination(of: outgoing, resolved: resolved)
            } catch {
                return finish(.notSent(tag: outgoing.tag, .wrapping(error, function: "sendmsg")), closing: closing)
            }
            guard settings.hasSendFilter else { return write(outgoing, to: address, closing: closing) }
            state = .busy(.filtering(outgoing, to: address), closesAfterSending: closing)
            return [.runSendFilter(outgoing, to: address)]
        }
    }

    /// Where a datagram goes; misuse (a destination on a connected socket, none on an unconnected one) and an
    /// over-long IPv4 datagram fail that send only.
    private func destination(
        of outgoing: UDPOutgoing,
        resolved: Result<[SocketAddress], any Error>?
    ) throws -> SocketAddress {
        let address: SocketAddress
        switch outgoing.destination {
        case nil:
            guard let connected else {
                throw GCDAsyncUdpSocketError.badConfig(
                    "You must specify destination of packet for a non-connected socket"
                )
            }
            address = connected
        case .address(let given):
            guard connected == nil else {
                throw GCDAsyncUdpSocketError.badConfig("Cannot specify destination of packet for connected socket")
            }
            address = try choose(from: [given])
        case .host:
            guard connected == nil else {
                throw GCDAsyncUdpSocketError.badConfig("Cannot specify destination of packet for connected socket")
            }
            address = try choose(from: resolved?.get() ?? [])
        }
        if address.protocol == .inet, outgoing.data.count > Self.maxIPv4Datagram {
            throw GCDAsyncUdpSocketError.posix(EMSGSIZE, function: "sendmsg")
        }
        return address
    }

    /// The address to use: by preference among the families this life has a channel for.
    func choose(from addresses: [SocketAddress]) throws -> SocketAddress {
        let usable = addresses.filter { families.contains($0.protocol) }
        let chosen: SocketAddress?
        switch settings.preference {
        case .neutral: chosen = usable.first
        case .ipv4: chosen = usable.first { $0.protocol == .inet } ?? usable.first
        case .ipv6: chosen = usable.first { $0.protocol == .inet6 } ?? usable.first
        }
        guard let chosen else {
            throw GCDAsyncUdpSocketError.other(
                "Address family of the resolved addresses is disabled or its socket is not available"
            )
        }
        return chosen
    }

    mutating func connectCompleted(_ result: Result<Void, any Error>) -> [Action] {
        guard case .busy(.connecting(let address), let closing) = state else { return [] }
        switch result {
        case .success:
            connected = address
            receiving.connectedPeer = address
            return [.publishFastPath] + finish(.connected(address), closing: closing)
        case .failure(let error):
            return finish(.notConnected(.wrapping(error, function: "connect")), closing: closing)
        }
    }

    mutating func sendFilterAnswered(_ keep: Bool) -> [Action] {
        guard case .busy(.filtering(let outgoing, let address), let closing) = state else { return [] }
        // The original reports a filtered-out datagram as sent.
        guard keep else { return finish(.sent(tag: outgoing.tag), closing: closing) }
        return write(outgoing, to: address, closing: closing)
    }

    private mutating func write(_ outgoing: UDPOutgoing, to address: SocketAddress, closing: Bool) -> [Action] {
        guard families.contains(address.protocol) else {
            let error = GCDAsyncUdpSocketError.other("No socket for the address family of \(address)")
            return finish(.notSent(tag: outgoing.tag, error), closing: closing)
        }
        lastWrite &+= 1
        let write = Write(id: lastWrite, tag: outgoing.tag, timeout: outgoing.timeout)
        state = .busy(.writing(write), closesAfterSending: closing)
        return [.write(id: write.id, tag: outgoing.tag, data: outgoing.data, to: address)]
    }

    mutating func writeStarted(_ id: UInt64) -> [Action] {
        guard case .busy(.writing(var write), let closing) = state, write.id == id, write.timeout >= 0 else {
            return []
        }
        // The kernel had no room: the timer starts now, as the original's does on EAGAIN.
        write.isTimerArmed = true
        state = .busy(.writing(write), closesAfterSending: closing)
        return [.armTimer(id: id, seconds: write.timeout)]
    }

    mutating func writeCompleted(_ id: UInt64, _ result: Result<Void, any Error>) -> [Action] {
        guard case .busy(.writing(let write), let closing) = state, write.id == id else { return [] }
        let cancel: [Action] = write.isTimerArmed ? [.cancelTimer(id: id)] : []
        switch result {
        case .success: return cancel + finish(.sent(tag: write.tag), closing: closing)
        case .failure(let error):
            return cancel + finish(.notSent(tag: write.tag, .wrapping(error, function: "sendmsg")), closing: closing)
        }
    }

    mutating func timerFired(_ id: UInt64) -> [Action] {
        guard case .busy(.writing(let write), let closing) = state, write.id == id else { return [] }
        return finish(.notSent(tag: write.tag, .sendTimeout), closing: closing)
    }
}
