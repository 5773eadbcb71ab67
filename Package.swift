// swift-tools-version: 6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Tether",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16)],
    products: [
        .library(name: "TetherCore", targets: ["TetherCore"]),
        .library(name: "TetherSockets", targets: ["TetherSockets"]),
        .library(name: "TetherHTTP", targets: ["TetherHTTP"]),
        .library(name: "TetherReachability", targets: ["TetherReachability"]),
        .library(name: "TetherStore", targets: ["TetherStore"]),
        .library(name: "TetherNotes", targets: ["TetherNotes"]),
        .library(name: "TetherPostgres", targets: ["TetherPostgres"]),
        .executable(name: "tether", targets: ["tether"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.26.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.1.0"),
        // Tests only: the in-process HTTP/2 server of TetherHTTPTests (AsyncHTTPClient resolves it anyway).
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.36.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.1.0"),
        // Documentation only: `swift package generate-documentation` (scripts/docs.sh).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
    ],
    targets: [
        // Internal (package access): the one lock box and the one unchecked wrapper every module uses.
        .target(
            name: "TetherConcurrency",
            swiftSettings: swiftSettings
        ),
        // Internal (package access): the one name resolver (getaddrinfo on NIO's thread pool), for sockets and
        // reachability.
        .target(
            name: "TetherResolver",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TetherCore",
            dependencies: [.product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TetherSockets",
            dependencies: [
                "TetherCore", "TetherConcurrency", "TetherResolver",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TetherHTTP",
            dependencies: [
                "TetherConcurrency",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(name: "CTetherNetlink"),
        .target(
            name: "TetherReachability",
            dependencies: [
                "TetherConcurrency", "TetherResolver",
                .product(name: "NIOCore", package: "swift-nio"),
                .target(name: "CTetherNetlink", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TetherStore",
            dependencies: ["TetherConcurrency", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: swiftSettings
        ),
        // The notes service over the seed's STX frames: server, client, wire format.
        .target(
            name: "TetherNotes",
            dependencies: [
                "TetherConcurrency", "TetherCore", "TetherSockets", "TetherStore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: swiftSettings
        ),
        // A module of its own so that users of the file and SQLite stores never build postgres-nio.
        .target(
            name: "TetherPostgres",
            dependencies: [
                "TetherConcurrency", "TetherStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "tether",
            dependencies: [
                "TetherConcurrency", "TetherCore", "TetherSockets", "TetherHTTP", "TetherReachability", "TetherStore",
                "TetherNotes", "TetherPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Test tooling (not products): helper processes that tests start in namespaces or kill at random moments.
        .executableTarget(
            name: "TetherReachProbe",
            dependencies: ["TetherReachability"],
            path: "Tests/Tools/TetherReachProbe",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "TetherUDPProbe",
            dependencies: ["TetherSockets", .product(name: "NIOCore", package: "swift-nio")],
            path: "Tests/Tools/TetherUDPProbe",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "TetherLivenessProbe",
            dependencies: ["TetherSockets", .product(name: "NIOCore", package: "swift-nio")],
            path: "Tests/Tools/TetherLivenessProbe",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "TetherStoreCrashWriter",
            dependencies: ["TetherStore"],
            path: "Tests/Tools/TetherStoreCrashWriter",
            swiftSettings: swiftSettings
        ),
        // Test tooling: the allocation counter (the malloc family, defined in the one executable that links it) and
        // the harness that counts each case's allocations per operation beside the engine's. TetherAllocationTests
        // runs it against Tests/Data/allocation-budgets.json (BENCHMARKS.md, "Allocation budgets").
        .target(name: "CTetherAllocationCounter", path: "Tests/Tools/CTetherAllocationCounter"),
        .executableTarget(
            name: "TetherAllocations",
            dependencies: [
                "CTetherAllocationCounter", "TetherConcurrency", "TetherCore", "TetherSockets", "TetherHTTP",
                "TetherNotes", "TetherStore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/Tools/TetherAllocations",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TetherTestSupport",
            dependencies: ["TetherConcurrency", "TetherStore"],
            path: "Tests/TetherTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TetherCoreTests",
            dependencies: [
                "TetherConcurrency", "TetherCore", "TetherTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TetherSocketsTests",
            dependencies: [
                "TetherConcurrency", "TetherSockets", "TetherCore", "TetherTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TetherHTTPTests",
            dependencies: [
                "TetherConcurrency", "TetherHTTP", "TetherTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TetherReachabilityTests",
            dependencies: ["TetherConcurrency", "TetherReachability", "TetherTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TetherStoreTests",
            dependencies: [
                "TetherConcurrency", "TetherStore", "TetherPostgres", "TetherTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TetherPostgresTests",
            dependencies: [
                "TetherConcurrency", "TetherStore", "TetherPostgres", "TetherTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TetherAllocationTests",
            dependencies: ["TetherTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TetherNotesTests",
            dependencies: [
                "TetherConcurrency", "TetherCore", "TetherNotes", "TetherPostgres", "TetherSockets", "TetherStore",
                "TetherTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)

// A build for some test targets only (the thread sanitizer's in .ci/run): TETHER_TEST_TARGETS="A B" keeps those test
// targets, TetherUDPProbe, TetherLivenessProbe and the targets they use, and drops everything else (the other tests,
// the `tether` command, TetherPostgres and postgres-nio, …), so that none of it is built. The tests then run the
// `tether` of another build, found through TETHER_PRODUCTS_DIR (see BuiltProduct).
if let kept = Context.environment["TETHER_TEST_TARGETS"]?.split(separator: " ").map(String.init), !kept.isEmpty {
    let targets = Dictionary(uniqueKeysWithValues: package.targets.map { ($0.name, $0) })
    var needed: Set<String> = []
    var waiting = kept + ["TetherUDPProbe", "TetherLivenessProbe"]
    while let name = waiting.popLast() {
        guard let target = targets[name], needed.insert(name).inserted else { continue }
        for dependency in target.dependencies {
            switch dependency {
            case .targetItem(let name, _), .byNameItem(let name, _): waiting.append(name)
            default: break
            }
        }
    }
    package.targets.removeAll { !needed.contains($0.name) }
    package.products.removeAll { product in
        let targets = (product as? Product.Library)?.targets ?? (product as? Product.Executable)?.targets ?? []
        return !targets.allSatisfy(needed.contains)
    }
}
