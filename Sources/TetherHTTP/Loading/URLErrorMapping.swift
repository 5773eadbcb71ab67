import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLError {
    /// Makes a `URLError` with the failing URL (and its string) attached, and an optional underlying error.
    static func tether(
        _ code: URLError.Code,
        url: URL?,
        underlying: (any Error)? = nil,
        message: String? = nil
    )
        -> URLError
    {
        var info: [String: Any] = [:]
        // A password in the URL stays out of errors, which are logged and shown.
        if let url = url.map({ Redaction.url($0) }) {
            info[NSURLErrorFailingURLErrorKey] = url
            // The key's value, spelled out: the constant is deprecated on Linux, but NSURLConnection code reads it.
            info["NSErrorFailingURLStringKey"] = url.absoluteString
        }
        if let underlying {
            info[NSUnderlyingErrorKey] = underlying as NSError
        }
        info[NSLocalizedDescriptionKey] = message ?? URLError.describe(code)
        return URLError(code, userInfo: info)
    }

    private static func describe(_ code: URLError.Code) -> String {
        switch code {
        case .cancelled: "cancelled"
        case .badURL: "bad URL"
        case .unsupportedURL: "unsupported URL"
        case .timedOut: "the request timed out"
        case .cannotFindHost: "a server with the specified hostname could not be found"
        case .cannotConnectToHost: "could not connect to the server"
        case .networkConnectionLost: "the network connection was lost"
        case .httpTooManyRedirects: "too many HTTP redirects"
        case .secureConnectionFailed: "a TLS error occurred and a secure connection to the server cannot be made"
        case .serverCertificateUntrusted: "the certificate for this server is invalid"
        case .dataLengthExceedsMaximum: "the resource exceeds the maximum size"
        case .cannotDecodeContentData: "the response body could not be decoded"
        case .userCancelledAuthentication: "the authentication challenge was cancelled"
        case .resourceUnavailable: "the resource is not in the cache and loading is not allowed"
        case .badServerResponse: "the server returned a bad response"
        case .cannotCreateFile: "the file cannot be created"
        case .cannotWriteToFile: "the file cannot be written"
        case .requestBodyStreamExhausted: "the request body stream is exhausted"
        case .userAuthenticationRequired: "the proxy wants credentials (407)"
        default: "URL loading failed (\(code.rawValue))"
        }
    }
}

/// Translates engine errors (AsyncHTTPClient, NIO, NIOSSL, POSIX) into NSURLConnection's `URLError` codes.
enum URLErrorMapping {
    static func map(_ error: any Error, url: URL?) -> URLError {
        if let urlError = error as? URLError { return urlError }
        return .tether(self.code(for: error), url: url, underlying: error)
    }

    static func code(for error: any Error) -> URLError.Code {
        if error is CancellationError { return .cancelled }
        if let clientError = error as? HTTPClientError {
            switch clientError {
            case .cancelled: return .cancelled
            case .connectTimeout, .readTimeout, .writeTimeout, .deadlineExceeded: return .timedOut
            case .remoteConnectionClosed: return .networkConnectionLost
            case .invalidURL, .emptyHost, .emptyScheme: return .badURL
            case .bodyLengthMismatch: return .networkConnectionLost
            case .proxyAuthenticationRequired: return .userAuthenticationRequired
            case .invalidProxyResponse: return .cannotConnectToHost
            case .socksHandshakeTimeout, .httpProxyHandshakeTimeout: return .timedOut
            default:
                if String(describing: clientError).contains("unsupportedScheme") { return .unsupportedURL }
                return .badServerResponse
            }
        }
        if let connectionError = error as? NIOConnectionError {
            if connectionError.dnsAError != nil || connectionError.dnsAAAAError != nil,
                connectionError.connectionErrors.isEmpty
            {
                return .cannotFindHost
            }
            return .cannotConnectToHost
        }
        if let channelError = error as? ChannelError {
            switch channelError {
            case .connectTimeout: return .timedOut
            case .ioOnClosedChannel, .eof, .alreadyClosed, .outputClosed: return .networkConnectionLost
            default: return .networkConnectionLost
            }
        }
        if let ioError = error as? IOError {
            switch ioError.errnoCode {
            case ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, EADDRNOTAVAIL: return .cannotConnectToHost
            case ETIMEDOUT: return .timedOut
            default: return .networkConnectionLost
            }
        }
        if let sslError = error as? NIOSSLError {
            if case .handshakeFailed(let inner) = sslError, self.isCertificateFailure(inner) {
                return .serverCertificateUntrusted
            }
            if case .uncleanShutdown = sslError { return .networkConnectionLost }
            return .secureConnectionFailed
        }
        if error is NIOSSLExtraError { return .secureConnectionFailed }
        // The connection ended inside a body whose length was known: lost, not malformed (NSURLConnection's code).
        if let parserError = error as? HTTPParserError {
            return parserError == .invalidEOFState ? .networkConnectionLost : .badServerResponse
        }
        let typeName = String(reflecting: type(of: error))
        if typeName.contains("Decompression") { return .cannotDecodeContentData }
        if typeName.contains("DNS") || typeName.contains("Resolver") { return .cannotFindHost }
        return .cannotConnectToHost
    }

    private static func isCertificateFailure(_ error: BoringSSLError) -> Bool {
        let text = String(describing: error).uppercased()
        return text.contains("CERTIFICATE") || text.contains("VERIFY")
    }
}
