import Dispatch
import Foundation
import TetherSockets

#if canImport(Glibc)
import Glibc
#endif

/// How a test names an error: `code 9`, `posix ETIMEDOUT`, `nil`; with `, not connected`/`, lost` when the error
/// says.
func livenessName(_ error: (any Error)?) -> String {
    guard let error else { return "nil" }
    if let own = error as? GCDAsyncSocketError {
        var text = own.posixErrorCode.map { "posix \($0 == .ETIMEDOUT ? "ETIMEDOUT" : "\($0.rawValue)")" }
        text = text ?? "code \(own.code.rawValue)"
        if own.disconnection == .notConnected { return text! + ", not connected" }
        if own.disconnection == .connectionLost { return text! + ", lost" }
        return text!
    }
    let ns = error as NSError
    if ns.domain == NSPOSIXErrorDomain, ns.code == Int(ETIMEDOUT) { return "posix ETIMEDOUT" }
    return "\(ns.domain) \(ns.code)"
}

/// A GCD-face delegate that records the liveness callbacks (and connect, read, disconnect) as lines.
final class GCDLivenessRecorder: GCDAsyncSocketDelegate, @unchecked Sendable {
    // Sendable: the log is locked; the hooks are set before the socket starts.
    let queue = DispatchQueue(label: "liveness-recorder")
    let log = EventLog<String>()
    /// Run inside `didAcceptNewSocket` (keep the socket there).
    var onAccept: ((GCDAsyncSocket) -> Void)?
    /// Run inside `didRead`.
    var onRead: ((GCDAsyncSocket, Data) -> Void)?
    var events: [String] { log.events }

    func wait(_ condition: @escaping @Sendable ([String]) -> Bool) async throws -> [String] {
        try await log.wait(timeout: .seconds(20), until: condition)
    }

    func socket(_ sock: GCDAsyncSocket, didAcceptNewSocket newSocket: GCDAsyncSocket) {
        onAccept?(newSocket)
        log.append("accepted")
    }
    func socket(_ sock: GCDAsyncSocket, didConnectToHost host: String, port: UInt16) { log.append("connected") }
    func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        onRead?(sock, data)
        log.append("read \(String(decoding: data, as: UTF8.self))")
    }
    func socket(_ sock: GCDAsyncSocket, didNotConnect error: any Error) {
        log.append("not connected: \(livenessName(error))")
    }
    func socket(_ sock: GCDAsyncSocket, didBecomeIdle event: IdleStateEvent) { log.append("idle \(event)") }
    func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {
        log.append("disconnected: \(livenessName(err))")
    }
}

/// A RunLoop-face delegate that records the liveness callbacks (and connect, read, the close pair) as lines.
final class RunLoopLivenessRecorder: AsyncSocketDelegate, @unchecked Sendable {
    // Sendable: the log is locked.
    let log = EventLog<String>()
    var events: [String] { log.events }

    func wait(_ condition: @escaping @Sendable ([String]) -> Bool) async throws -> [String] {
        try await log.wait(timeout: .seconds(20), until: condition)
    }

    func onSocket(_ sock: AsyncSocket, didConnectToHost host: String, port: UInt16) { log.append("connected") }
    func onSocket(_ sock: AsyncSocket, didRead data: Data, withTag tag: Int) {
        log.append("read \(String(decoding: data, as: UTF8.self))")
    }
    func onSocket(_ sock: AsyncSocket, didNotConnect err: any Error) {
        log.append("not connected: \(livenessName(err))")
    }
    func onSocket(_ sock: AsyncSocket, didBecomeIdle event: IdleStateEvent) { log.append("idle \(event)") }
    func onSocket(_ sock: AsyncSocket, willDisconnectWithError err: (any Error)?) {
        log.append("will disconnect: \(livenessName(err))")
    }
    func onSocketDidDisconnect(_ sock: AsyncSocket) { log.append("disconnected") }
}
