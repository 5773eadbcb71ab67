import Foundation
import NIOSSL

/// How the engine's errors reach a RunLoop-era delegate: the original's codes for Tether's own conditions, the
/// cause's own domain (as CFNetwork reported it) for everything from below.
enum RunLoopErrorMapping {
    /// What `onSocket(_:willDisconnectWithError:)` receives for a close the engine reported with `error`; `nil`
    /// for a peer's clean close. Returns `.none` when the close was local (no `willDisconnect` at all).
    static func willDisconnectError(for error: (any Error)?) -> (any Error)?? {
        guard let error else { return .none }
        guard let own = error as? GCDAsyncSocketError else {
            return .some(AsyncSocketError(code: .cfSocketError, underlying: error))
        }
        switch own.domain {
        case .posix:
            let errno = own.posixErrorCode?.rawValue ?? EIO
            return .some(nsError(NSPOSIXErrorDomain, code: Int(errno), message: own.message, cause: own))
        case .netDB:
            let code = (own.underlying as? DNSLookupError).map { Int($0.code) } ?? Int(EAI_FAIL)
            return .some(nsError(own.domain.rawValue, code: code, message: own.message, cause: own))
        case .tls:
            let code = secureTransportCode(for: own.underlying ?? own)
            return .some(nsError(own.domain.rawValue, code: code, message: own.message, cause: own))
        case .asyncSocket, .asyncUdpSocket:
            switch own.code {
            case .closed: return .some(nil)
            case .connectTimeout: return .some(AsyncSocketError(code: .connectTimeoutError))
            case .readTimeout: return .some(AsyncSocketError(code: .readTimeoutError))
            case .writeTimeout: return .some(AsyncSocketError(code: .writeTimeoutError))
            case .readMaxedOut: return .some(AsyncSocketError(code: .readMaxedOutError))
            case .heartbeatTimeout: return .some(AsyncSocketError(code: .heartbeatTimeoutError))
            default: return .some(AsyncSocketError(code: .cfSocketError, underlying: own))
            }
        }
    }

    /// The SecureTransport `OSStatus` nearest to a TLS failure (SecureTransport's `SecBase.h` codes): −9843 host name mismatch,
    /// −9814 expired, −9815 not yet valid, −9812 unknown root (any other chain failure), −9824 handshake failure
    /// alert, −9806 end of stream during the handshake, −9800 anything else.
    static func secureTransportCode(for error: any Error) -> Int {
        let text = String(describing: error).lowercased()
        if text.contains("hostname") || text.contains("host name") { return -9843 }
        if text.contains("expired") { return -9814 }
        if text.contains("not yet valid") { return -9815 }
        if text.contains("certificate_verify_failed") || text.contains("certificate verify failed")
            || text.contains("trust") || text.contains("pin")
        {
            return -9812
        }
        if text.contains("handshake_failure") || text.contains("handshake failure") { return -9824 }
        if text.contains("uncleanshutdown") || text.contains("eof") || text.contains("closed") { return -9806 }
        return -9800
    }

    private static func nsError(_ domain: String, code: Int, message: String, cause: any Error) -> NSError {
        NSError(
            domain: domain,
            code: code,
            userInfo: [NSLocalizedDescriptionKey: message, NSUnderlyingErrorKey: cause as NSError]
        )
    }
}
