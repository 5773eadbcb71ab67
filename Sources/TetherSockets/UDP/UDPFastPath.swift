import Foundation
import NIOCore
import TetherConcurrency

/// The delegate face's direct send: while a life's queue is idle (no send or connect waiting or running on the loop),
/// a send on an unconnected socket to an address known without a lookup goes to the kernel from the sending thread,
/// with its callback queued on the delegate queue as the loop's would be. Everything else — a connected socket, a
/// queue with work in it, a send filter, a name to resolve, a full socket buffer — takes the loop's path, so the
/// original's order of sends and callbacks is kept: the loop mirrors its state here (under this lock) whenever it
/// changes.
final class UDPFastPath: Sendable {
    private struct State {
        /// The loop is ready (adopted, not shut down, not closing after sends).
        var isOpen = false
        /// Packets queued on the loop and not finished, and operations handed to the loop and not run yet.
        var outstanding = 0
        var gates: [NIOBSDSocket.ProtocolFamily: UDPSendGate] = [:]
        var connected: SocketAddress?
        /// The last literal host sent to, parsed (a sender usually sends to the same peer again).
        var lastLiteral: (host: String, port: Int, address: SocketAddress)?
    }

    enum Result {
        case sent
        case failed(GCDAsyncUdpSocketError)
    }

    private let state = LockedBox(State())

    /// Counts a packet that goes to the loop; from any thread, before it is handed over.
    func packetQueued() {
        state.withLock { $0.outstanding += 1 }
    }

    /// On the loop: a queued packet finished (its callback is queued).
    func packetFinished() {
        state.withLock { $0.outstanding -= 1 }
    }

    /// On the loop: the state the fast path depends on.
    func publish(isOpen: Bool, gates: [NIOBSDSocket.ProtocolFamily: UDPSendGate], connected: SocketAddress?) {
        state.withLock {
            $0.isOpen = isOpen
            $0.gates = gates
            $0.connected = connected
        }
    }

    /// Sends `data` now when it may go directly; nil when it must take the loop's path. `whenTaken` runs under the
    /// gate's lock when the kernel takes it.
    func send(_ data: Data, to destination: UDPDestination?, whenTaken: () -> Void) -> Result? {
        state.withLock { state -> Result? in
            guard state.isOpen, state.outstanding == 0 else { return nil }
            let address: SocketAddress
            switch destination {
            case nil:
                // Never from another thread on a connected socket: the kernel leaves a peer's ICMP refusal on the
                // socket (SO_ERROR) and wakes the loop with EPOLLERR; a send here would consume that error before
                // the loop reads it, and NIO takes a socket without an error for a reset one (and traps in
                // `readEOF0`). On the loop's path, sends and the loop's error handling take turns.
                return nil
            case .address(let given):
                guard state.connected == nil else { return nil }
                address = given
            case .host(let host, let port):
                guard state.connected == nil else { return nil }
                // Compared in place: a copy of the cached tuple would retain its string and address.
                if state.lastLiteral?.port == port, state.lastLiteral?.host == host,
                    let cached = state.lastLiteral?.address
                {
                    address = cached
                } else {
                    guard let literal = HostResolver.literalAddresses(host: host, port: port), literal.count == 1
                    else { return nil }
                    address = literal[0]
                    state.lastLiteral = (host, port, address)
                }
            }
            // Over-long IPv4 datagrams are refused by the loop's path, with the original's error.
            guard let gate = state.gates[address.protocol], address.protocol != .inet || data.count <= 65_507 else {
                return nil
            }
            let envelope = AddressedEnvelope(remoteAddress: address, data: ByteBuffer(bytes: data))
            switch gate.sendIfIdle(envelope, whenTaken: whenTaken) {
            case .sent: return .sent
            case .failed(let code):
                return .failed(.wrapping(IOError(errnoCode: code, reason: "sendto"), function: "sendmsg"))
            case .queued, .closed, nil: return nil
            }
        }
    }
}
