// swift-tools-version: 6.1
// libFuzzer targets for Tether's parsers of untrusted bytes: one executable per parser.
// Build: swift build -c release -Xswiftc -sanitize=fuzzer,address   (or run ../scripts/fuzz.sh)
import Foundation
import PackageDescription

// A path dependency's identity is its folder's name, which depends on where the repository was cloned.
let rootPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent

let swiftSettings: [SwiftSetting] = [.swiftLanguageMode(.v6)]
// GNU gold (the Linux default) dies with an internal error linking libFuzzer next to SwiftPM's renamed `main`;
// the toolchain's lld links it.
let fuzzerLinkerSettings: [LinkerSetting] = [.unsafeFlags(["-use-ld=lld"], .when(platforms: [.linux]))]

func tether(_ product: String) -> Target.Dependency {
    .product(name: product, package: rootPackage)
}

let package = Package(
    name: "TetherFuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ],
    targets: [
        .target(name: "CLibFuzzer"),
        .target(
            name: "FuzzSupport",
            dependencies: [
                "CLibFuzzer",
                .product(name: "TetherCore", package: rootPackage),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "FuzzSTX",
            dependencies: ["FuzzSupport", tether("TetherCore"), .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: swiftSettings,
            linkerSettings: fuzzerLinkerSettings
        ),
        .executableTarget(
            name: "FuzzLengthField",
            dependencies: ["FuzzSupport", tether("TetherCore"), .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: swiftSettings,
            linkerSettings: fuzzerLinkerSettings
        ),
        .executableTarget(
            name: "FuzzDelimiter",
            dependencies: ["FuzzSupport", tether("TetherCore"), .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: swiftSettings,
            linkerSettings: fuzzerLinkerSettings
        ),
        // Parsers of untrusted bytes outside TetherCore, through their `@_spi(Fuzzing)` entry points.
        .executableTarget(
            name: "FuzzCacheControl",
            dependencies: ["FuzzSupport", tether("TetherHTTP")],
            swiftSettings: swiftSettings,
            linkerSettings: fuzzerLinkerSettings
        ),
        .executableTarget(
            name: "FuzzAuthChallenge",
            dependencies: ["FuzzSupport", tether("TetherHTTP")],
            swiftSettings: swiftSettings,
            linkerSettings: fuzzerLinkerSettings
        ),
        .executableTarget(
            name: "FuzzRecordFile",
            dependencies: ["FuzzSupport", tether("TetherStore")],
            swiftSettings: swiftSettings,
            linkerSettings: fuzzerLinkerSettings
        ),
        .executableTarget(
            name: "FuzzNetlink",
            dependencies: ["FuzzSupport", tether("TetherReachability")],
            swiftSettings: swiftSettings,
            linkerSettings: fuzzerLinkerSettings
        ),
        .executableTarget(
            name: "FuzzNotesWire",
            dependencies: [
                "FuzzSupport", tether("TetherNotes"), tether("TetherStore"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings,
            linkerSettings: fuzzerLinkerSettings
        ),
        .executableTarget(
            name: "FuzzTLSDictionary",
            dependencies: [
                "FuzzSupport", tether("TetherSockets"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings,
            linkerSettings: fuzzerLinkerSettings
        ),
    ]
)
