import Dispatch
import Foundation
import NIOConcurrencyHelpers
import TetherSockets

/// The echo server on the delegate face: a listening `GCDAsyncSocket` on 127.0.0.1; each accepted socket gets a
/// ``GCDEchoSession`` as its delegate, on one of 16 serial queues, which reads a frame (header, then the rest),
/// checks it with the codec and writes it back.
final class GCDEchoServer: GCDAsyncSocketDelegate, @unchecked Sendable {
    let listener: GCDAsyncSocket
    private(set) var port = 0
    let counters: ServerCounters
    let tls: TLSSettings?
    let queues = (0..<16).map { DispatchQueue(label: "stress.gcd-server.\($0)") }
    /// Each accepted socket with its session: a socket nobody keeps closes, as in the original.
    private let sessions = NIOLockedValueBox([ObjectIdentifier: (GCDAsyncSocket, GCDEchoSession)]())
    private let accepted = NIOLockedValueBox(0)

    init(tls: TLSSettings?, counters: ServerCounters) throws {
        self.tls = tls
        self.counters = counters
        listener = GCDAsyncSocket()
        listener.setDelegate(self, delegateQueue: DispatchQueue(label: "stress.gcd-server.accept"))
        try listener.accept(onInterface: "127.0.0.1", port: 0)
        port = Int(listener.localPort)
    }

    func socket(_ sock: GCDAsyncSocket, didAcceptNewSocket newSocket: GCDAsyncSocket) {
        let number = accepted.withLockedValue { count in
            count += 1
            return count
        }
        counters.add("accepted")
        let session = GCDEchoSession(server: self)
        sessions.withLockedValue { $0[ObjectIdentifier(newSocket)] = (newSocket, session) }
        newSocket.setDelegate(session, delegateQueue: queues[number % queues.count])
        if let tls { newSocket.startTLS(tls) }
        newSocket.readData(toLength: 7, withTimeout: -1, tag: GCDEchoSession.headerTag)
    }

    func ended(_ sock: GCDAsyncSocket) {
        _ = sessions.withLockedValue { $0.removeValue(forKey: ObjectIdentifier(sock)) }
    }
}
