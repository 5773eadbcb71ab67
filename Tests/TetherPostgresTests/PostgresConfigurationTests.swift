import Foundation
import NIOSSL
import Testing
import TetherStore

@testable import TetherPostgres

struct PostgresConfigurationTests {
    @Test func aTCPURLGivesHostPortUserPasswordAndDatabase() throws {
        let configuration = try PostgresConfiguration(url: "postgres://ann:s%40cret@db.example:6543/notes")
        #expect(configuration.host == "db.example")
        #expect(configuration.port == 6543)
        #expect(configuration.unixSocketPath == nil)
        #expect(configuration.username == "ann")
        #expect(configuration.password == "s@cret")
        #expect(configuration.database == "notes")
        #expect(configuration.endpoint == "db.example:6543")
    }

    @Test func thePortDefaultsTo5432AndTheDatabaseToTheUser() throws {
        let configuration = try PostgresConfiguration(url: "postgresql://ann@localhost")
        #expect(configuration.port == 5432)
        #expect(configuration.database == "ann")
        #expect(configuration.password == nil)
    }

    @Test func aUnixSocketDirectoryNamesTheSocketInItAsLibpqDoes() throws {
        let query = try PostgresConfiguration(url: "postgres://ann@/notes?host=/run/postgresql&port=5433")
        #expect(query.unixSocketPath == "/run/postgresql/.s.PGSQL.5433")
        #expect(query.host == nil)
        #expect(query.database == "notes")
        let encoded = try PostgresConfiguration(url: "postgres://ann@%2Frun%2Fpostgresql/notes")
        #expect(encoded.unixSocketPath == "/run/postgresql/.s.PGSQL.5432")
        let file = try PostgresConfiguration(url: "postgres://ann@/notes?host=/tmp/x/.s.PGSQL.7000")
        #expect(file.unixSocketPath == "/tmp/x/.s.PGSQL.7000")
    }

    @Test func sslmodeChoosesTheTLSSetting() throws {
        func verification(_ settings: TLSConfiguration) -> String {
            switch settings.certificateVerification {
            case .none: "none"
            case .noHostnameVerification: "noHostnameVerification"
            case .fullVerification: "fullVerification"
            @unknown default: "other"
            }
        }
        func mode(_ sslmode: String) throws -> String {
            switch try PostgresConfiguration(url: "postgres://ann@h/d?sslmode=\(sslmode)").tls {
            case .disable: "disable"
            case .prefer(let settings): "prefer \(verification(settings))"
            case .require(let settings): "require \(verification(settings))"
            }
        }
        #expect(try mode("disable") == "disable")
        #expect(try mode("prefer") == "prefer none")
        #expect(try mode("require") == "require none")
        #expect(try mode("verify-ca") == "require noHostnameVerification")
        #expect(try mode("verify-full") == "require fullVerification")
        guard case .prefer = try PostgresConfiguration(url: "postgres://ann@h/d").tls else {
            Issue.record("libpq's default is prefer")
            return
        }
    }

    @Test(arguments: [
        "",
        "not a url",
        "http://ann@localhost/notes",
        "postgres://localhost/notes",
        "postgres://ann@/notes",
        "postgres://ann@localhost/notes/extra",
        "postgres://ann@localhost:0/notes",
        "postgres://ann@localhost/notes?sslmode=sometimes",
        "postgres://ann@localhost/notes?port=many",
        "postgres://ann@localhost/notes?application=x",
        "postgres://ann@/notes?host=/run/postgresql&sslmode=require",
        "postgres://ann@localhost/notes?sslmode=require&sslrootcert=/etc/ssl/certs/ca-certificates.crt",
        "postgres://ann@localhost/notes?sslrootcert=/etc/ssl/certs/ca-certificates.crt",
        "postgres://ann@localhost/notes?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
        "postgres://ann@localhost/notes?sslmode=verify-full&sslrootcert=/etc/hostname",
    ])
    func aBadURLIsAnInvalidArgument(url: String) {
        #expect {
            try PostgresConfiguration(url: url)
        } throws: { error in
            (error as? StoreError)?.code == .invalidArgument
        }
    }

    @Test func thePasswordIsNotInTheErrorMessage() {
        do {
            _ = try PostgresConfiguration(url: "postgres://ann:hunter2@localhost/notes?sslmode=never")
            Issue.record("expected an error")
        } catch {
            #expect(!"\(error)".contains("hunter2"))
            #expect("\(error)".contains("***"))
        }
    }

    @Test func aBadURLFailsTheStoreBeforeAnyConnection() async {
        await #expect {
            try await PostgresStore<Note>(url: "postgres:///no-user")
        } throws: { error in
            (error as? StoreError)?.code == .invalidArgument
        }
    }
}
