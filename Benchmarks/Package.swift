// swift-tools-version: 6.1
// Benchmarks live in their own package so that users of Tether never build their dependencies.
import PackageDescription

let package = Package(
    name: "TetherBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Tether", path: ".."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "TetherBenchmarks",
            dependencies: [
                .product(name: "TetherSockets", package: "Tether"),
                .product(name: "TetherCore", package: "Tether"),
                .product(name: "TetherHTTP", package: "Tether"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "TetherStore", package: "Tether"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The load and soak tool of the reliability issue: `swift build -c release --product tether-stress`.
        .executableTarget(
            name: "tether-stress",
            dependencies: [
                .product(name: "TetherSockets", package: "Tether"),
                .product(name: "TetherCore", package: "Tether"),
                .product(name: "TetherHTTP", package: "Tether"),
                .product(name: "TetherStore", package: "Tether"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Sources/TetherStress",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The notes service's throughput and push latency (SQLite, PostgreSQL, one and two servers):
        // `swift build -c release --product tether-notes-bench`. Starts its own PostgreSQL (BENCHMARKS.md).
        .executableTarget(
            name: "tether-notes-bench",
            dependencies: [
                .product(name: "TetherNotes", package: "Tether"),
                .product(name: "TetherPostgres", package: "Tether"),
                .product(name: "TetherSockets", package: "Tether"),
                .product(name: "TetherStore", package: "Tether"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                "CMallocStats",
            ],
            path: "Sources/TetherNotesBench",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // glibc's allocator statistics (the live heap) for the notes soak.
        .target(name: "CMallocStats", path: "Sources/CMallocStats"),
    ]
)
