import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Sends a request once more when it failed because the kept-alive connection it went out on was already closed by
/// the server (a server whose idle timeout is shorter than the pool's closes it between two requests), as
/// NSURLConnection and browsers do.
///
/// Only requests that may be repeated are: safe methods (RFC 9110 §9.2.1) without a body, and only for failures
/// before any byte of a response arrived (an attempt ends once the response head is in, so every error it throws is
/// such a failure); at most ``maximumAttempts`` sends in all, then the failure is the load's.
enum StaleConnectionRetry {
    /// Each stale connection in the pool costs one attempt; the pool rarely holds more than a couple.
    static let maximumAttempts = 3

    /// Runs `attempt` (one send, up to the response head) until it succeeds, fails for another reason than a
    /// closed connection, or ``maximumAttempts`` ran; `request` is not repeated unless ``mayRepeat(_:)``, nor once
    /// `isStopped` (the load was cancelled).
    static func execute<Result>(
        _ request: HTTPClient.Request,
        logger: Logger?,
        isStopped: () -> Bool,
        attempt: () async throws -> Result
    ) async throws -> Result {
        var count = 1
        while true {
            do {
                return try await attempt()
            } catch
                where count < Self.maximumAttempts && Self.mayRepeat(request) && Self.isClosedConnection(error)
                && !isStopped()
            {
                count += 1
                logger?.debug(
                    "retrying on a new connection after \(error)",
                    metadata: ["url": "\(Redaction.url(request.url.absoluteString))"]
                )
            }
        }
    }

    /// Safe methods without a body.
    static func mayRepeat(_ request: HTTPClient.Request) -> Bool {
        request.body == nil && ["GET", "HEAD", "OPTIONS", "TRACE"].contains(request.method.rawValue)
    }

    /// The failures of a connection that was closed under the request.
    static func isClosedConnection(_ error: any Error) -> Bool {
        switch error {
        case let error as HTTPClientError:
            return error == .remoteConnectionClosed
        case let error as ChannelError:
            switch error {
            case .ioOnClosedChannel, .eof, .alreadyClosed, .outputClosed: return true
            default: return false
            }
        case let error as IOError:
            return error.errnoCode == ECONNRESET || error.errnoCode == EPIPE
        case let error as NIOSSLError:
            if case .uncleanShutdown = error { return true }
            return false
        default:
            return false
        }
    }
}
