import Foundation
public import NIOSSL
public import PostgresNIO
import TetherStore

/// Where a ``PostgresStore`` finds its database and how it talks to it, usually read from a URL.
///
/// Accepted URLs (libpq's forms):
/// - `postgres://user:password@host:port/database?sslmode=require` (`postgresql://` too); the port defaults to 5432,
///   the database to the user name.
/// - `postgres://user@/database?host=/run/postgresql` or `postgres://user@%2Frun%2Fpostgresql/database`: a unix
///   socket; a directory means the socket `.s.PGSQL.<port>` in it, as libpq does.
///
/// `sslmode` is `disable`, `allow` or `prefer` (TLS if the server offers it, certificate not checked: libpq's
/// default), `require` (TLS or fail, certificate not checked), `verify-ca` or `verify-full` (TLS with the system's
/// trust roots, or with the PEM certificates of the file `sslrootcert` names, `verify-full` checking the host name
/// too). A unix socket never uses TLS.
///
/// `query_timeout` (Tether's, not libpq's) is ``queryTimeout`` in seconds (`2.5`), or `none`: how long a call waits for
/// the database's answers once it has a connection. It is not PostgreSQL's `statement_timeout`: the server is not told.
public struct PostgresConfiguration: Sendable {
    /// Whether and how to use TLS to the database.
    public enum TLS: Sendable {
        /// Plain TCP.
        case disable
        /// TLS if the server offers it, plain TCP if not.
        case prefer(TLSConfiguration)
        /// TLS, or the connection fails.
        case require(TLSConfiguration)
    }

    /// The host name or address, or `nil` for a unix socket.
    public var host: String?
    /// The TCP port (also the number in a unix socket's name).
    public var port: Int
    /// The unix socket's path, or `nil` for TCP.
    public var unixSocketPath: String?
    /// The user to log in as.
    public var username: String
    /// The password, if the server asks for one.
    public var password: String?
    /// The database.
    public var database: String
    /// TLS to the database (TCP only).
    public var tls: TLS
    /// The most connections the store's pool opens at once.
    public var maximumConnections: Int = 20
    /// How long a call waits for a connection of the pool (the server being down or every connection busy) before it
    /// fails with `StoreError.Code.io`; also the timeout of opening a connection. Positive.
    public var connectionTimeout: Duration = .seconds(10)
    /// How long a call waits for the database's answers once it has a connection (all its statements, a write's
    /// `COMMIT` included), or `nil` for no limit (URL parameter `query_timeout`, in seconds, or `none`). Positive.
    ///
    /// A call that passes it fails with `StoreError.Code.io` ("did not answer"), and its connection is closed: the
    /// server rolls back what the call began unless its `COMMIT` had already arrived, so a write that fails so may or
    /// may not have been committed. A call whose connection closes (the server restarts, the connection drops) fails
    /// with `io` at once, with the same uncertainty. Make it longer than your slowest statement.
    public var queryTimeout: Duration? = .seconds(30)

    /// A TCP configuration.
    /// - Parameters:
    ///   - host: The host name or address.
    ///   - port: The TCP port.
    ///   - username: The user to log in as.
    ///   - password: The password, if any.
    ///   - database: The database.
    ///   - tls: TLS to the database.
    public init(
        host: String,
        port: Int = 5432,
        username: String,
        password: String? = nil,
        database: String,
        tls: TLS = .disable
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.tls = tls
    }

    /// A unix-socket configuration.
    /// - Parameters:
    ///   - unixSocketPath: The socket file (e.g. `/run/postgresql/.s.PGSQL.5432`).
    ///   - username: The user to log in as.
    ///   - password: The password, if any.
    ///   - database: The database.
    public init(unixSocketPath: String, username: String, password: String? = nil, database: String) {
        self.unixSocketPath = unixSocketPath
        self.port = 5432
        self.username = username
        self.password = password
        self.database = database
        self.tls = .disable
    }

    /// Reads a configuration from a `postgres://` URL (see the type's documentation for the forms).
    /// - Parameter string: The URL.
    /// - Throws: `StoreError.Code.invalidArgument` when it is not such a URL (another scheme, no user, a bad port,
    ///   an unknown `sslmode`, an `sslrootcert` with a mode that checks no certificate or that names no readable
    ///   PEM file).
    public init(url string: String) throws {
        func invalid(_ reason: String) -> StoreError {
            StoreError(code: .invalidArgument, message: "not a PostgreSQL URL (\(reason)): \(Self.redacted(string))")
        }
        guard let components = URLComponents(string: string) else { throw invalid("unparsable") }
        guard let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
            throw invalid("the scheme must be postgres or postgresql")
        }
        guard let username = components.user, !username.isEmpty else { throw invalid("no user name") }
        let query = Dictionary(
            (components.queryItems ?? []).map { ($0.name.lowercased(), $0.value ?? "") },
            uniquingKeysWith: { $1 }
        )
        let known = ["sslmode", "sslrootcert", "host", "port", "query_timeout"]
        if let unknown = query.keys.first(where: { !known.contains($0) }) {
            throw invalid("unknown parameter \(unknown)")
        }
        var queryTimeout: Duration? = .seconds(30)
        if let text = query["query_timeout"] {
            guard let timeout = Self.queryTimeout(text) else {
                throw invalid("query_timeout \(text) is not a positive number of seconds or none")
            }
            queryTimeout = timeout
        }
        var port = components.port ?? 5432
        if let text = query["port"] {
            guard let number = Int(text) else { throw invalid("bad port \(text)") }
            port = number
        }
        guard (1...65535).contains(port) else { throw invalid("port \(port) out of range") }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !path.contains("/") else { throw invalid("the path must be just the database name") }
        let database = path.isEmpty ? username : path
        let host = query["host"] ?? components.host ?? ""
        if host.hasPrefix("/") {
            var socket = host
            if !(socket as NSString).lastPathComponent.hasPrefix(".s.PGSQL.") {
                socket = (socket as NSString).appendingPathComponent(".s.PGSQL.\(port)")
            }
            self.init(unixSocketPath: socket, username: username, password: components.password, database: database)
            self.port = port
            self.queryTimeout = queryTimeout
            if let mode = query["sslmode"], !["disable", "allow", "prefer"].contains(mode) {
                throw invalid("sslmode \(mode) over a unix socket")
            }
        } else {
            guard !host.isEmpty else { throw invalid("no host") }
            let mode = query["sslmode"] ?? "prefer"
            guard var tls = Self.tls(sslmode: mode) else { throw invalid("unknown sslmode") }
            if let roots = query["sslrootcert"] {
                guard mode == "verify-ca" || mode == "verify-full", case .require(var settings) = tls else {
                    throw invalid("sslrootcert needs sslmode verify-ca or verify-full")
                }
                guard (try? NIOSSLCertificate.fromPEMFile(roots))?.isEmpty == false else {
                    throw invalid("sslrootcert \(roots) is not a readable PEM certificate file")
                }
                settings.trustRoots = .file(roots)
                tls = .require(settings)
            }
            self.init(
                host: host,
                port: port,
                username: username,
                password: components.password,
                database: database,
                tls: tls
            )
            self.queryTimeout = queryTimeout
        }
    }

    /// The deadline a `query_timeout` parameter gives: `none` is no deadline; otherwise a finite, positive number of
    /// seconds, at most 10⁹ (about 31 years); `nil` for anything else (NaN, infinity, zero, negative, not a number).
    static func queryTimeout(_ text: String) -> Duration?? {
        if text.lowercased() == "none" { return .some(nil) }
        guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 1e9 else { return nil }
        return .some(.nanoseconds(Int64((seconds * 1e9).rounded())))
    }

    /// Checks the settings that the URL cannot make wrong.
    /// - Throws: `StoreError.Code.invalidArgument` for a ``connectionTimeout`` or ``queryTimeout`` that is zero or
    ///   negative, or a ``maximumConnections`` under 1.
    func validate() throws {
        guard connectionTimeout > .zero else {
            throw StoreError(code: .invalidArgument, message: "connectionTimeout \(connectionTimeout) is not positive")
        }
        if let queryTimeout, queryTimeout <= .zero {
            throw StoreError(code: .invalidArgument, message: "queryTimeout \(queryTimeout) is not positive")
        }
        guard maximumConnections >= 1 else {
            throw StoreError(code: .invalidArgument, message: "maximumConnections \(maximumConnections) is under 1")
        }
    }

    /// The TLS setting of a libpq `sslmode`, or `nil` for an unknown mode.
    static func tls(sslmode: String) -> TLS? {
        var unverified = TLSConfiguration.makeClientConfiguration()
        unverified.certificateVerification = .none
        switch sslmode {
        case "disable": return .disable
        case "allow", "prefer": return .prefer(unverified)
        case "require": return .require(unverified)
        case "verify-ca":
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .noHostnameVerification
            return .require(configuration)
        case "verify-full": return .require(.makeClientConfiguration())
        default: return nil
        }
    }

    /// The URL with its password replaced by `***`, for messages.
    static func redacted(_ string: String) -> String {
        guard var components = URLComponents(string: string), components.password != nil else { return string }
        components.password = "***"
        return components.string ?? string
    }

    /// Where the server is, for messages: `host:port` or the socket's path.
    public var endpoint: String {
        unixSocketPath ?? "\(host ?? ""):\(port)"
    }

    /// The configuration of postgres-nio's pool.
    public var clientConfiguration: PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if let unixSocketPath {
            configuration = .init(
                unixSocketPath: unixSocketPath,
                username: username,
                password: password,
                database: database
            )
        } else {
            let clientTLS: PostgresClient.Configuration.TLS
            switch tls {
            case .disable: clientTLS = .disable
            case .prefer(let settings): clientTLS = .prefer(settings)
            case .require(let settings): clientTLS = .require(settings)
            }
            configuration = .init(
                host: host ?? "",
                port: port,
                username: username,
                password: password,
                database: database,
                tls: clientTLS
            )
        }
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = connectionTimeout
        return configuration
    }

    /// The configuration of one connection outside the pool (schema migrations).
    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        if let unixSocketPath {
            configuration = .init(
                unixSocketPath: unixSocketPath,
                username: username,
                password: password,
                database: database
            )
        } else {
            let connectionTLS: PostgresConnection.Configuration.TLS
            do {
                switch tls {
                case .disable: connectionTLS = .disable
                case .prefer(let settings): connectionTLS = .prefer(try NIOSSLContext(configuration: settings))
                case .require(let settings): connectionTLS = .require(try NIOSSLContext(configuration: settings))
                }
            } catch {
                throw StoreError(code: .invalidArgument, message: "bad TLS configuration", underlying: error)
            }
            configuration = .init(
                host: host ?? "",
                port: port,
                username: username,
                password: password,
                database: database,
                tls: connectionTLS
            )
        }
        configuration.options.connectTimeout = .nanoseconds(
            connectionTimeout.components.seconds * 1_000_000_000 + connectionTimeout.components.attoseconds
                / 1_000_000_000
        )
        return configuration
    }
}
