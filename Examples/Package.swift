// swift-tools-version: 6.1
// Small runnable programs over Tether, one executable per example, each run by a test against loopback.
// A package of their own, so that users of Tether never build them: `cd Examples && swift build && swift test`.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let argumentParser = Target.Dependency.product(name: "ArgumentParser", package: "swift-argument-parser")
let nioCore = Target.Dependency.product(name: "NIOCore", package: "swift-nio")

let package = Package(
    name: "TetherExamples",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Tether", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        // An echo server and client on each face of TetherSockets.
        .executableTarget(
            name: "echo-runloop",
            dependencies: [.product(name: "TetherSockets", package: "Tether"), argumentParser],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "echo-gcd",
            dependencies: [.product(name: "TetherSockets", package: "Tether"), argumentParser],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "echo-async",
            dependencies: [.product(name: "TetherSockets", package: "Tether"), nioCore, argumentParser],
            swiftSettings: swiftSettings
        ),
        // The seed's STX frames between devices through a relay.
        .executableTarget(
            name: "stx-relay",
            dependencies: [
                .product(name: "TetherCore", package: "Tether"),
                .product(name: "TetherSockets", package: "Tether"),
                nioCore, argumentParser,
            ],
            swiftSettings: swiftSettings
        ),
        // A download through URLConnection's delegate, with a progress bar.
        .executableTarget(
            name: "download",
            dependencies: [.product(name: "TetherHTTP", package: "Tether"), argumentParser],
            swiftSettings: swiftSettings
        ),
        // NetworkReachabilityManager, one line per change.
        .executableTarget(
            name: "reach-watch",
            dependencies: [.product(name: "TetherReachability", package: "Tether"), nioCore, argumentParser],
            swiftSettings: swiftSettings
        ),
        // The notes app on each store.
        .executableTarget(
            name: "notes",
            dependencies: [.product(name: "TetherStore", package: "Tether"), argumentParser],
            swiftSettings: swiftSettings
        ),
        // Runs each built example as a child process (build first: `swift build`, then `swift test`).
        .testTarget(name: "ExamplesTests", swiftSettings: swiftSettings),
    ]
)
