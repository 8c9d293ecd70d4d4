// swift-tools-version:6.1
//
// Strata: Core Data for every platform Swift runs on.
// Modules by layer, dependencies pointing down (see ARCHITECTURE in the team docs):
//   CLZ4, CCRC32C -> StrataFormat -> StrataIO -> StrataStorage -> Strata -> strata (CLI)
// Fuzz/ and Benchmarks/ are nested packages so the library never depends on what only they need.

import PackageDescription

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Strata", targets: ["Strata"]),
        .library(name: "StrataStorage", targets: ["StrataStorage"]),
        .library(name: "StrataFormat", targets: ["StrataFormat"]),
        .library(name: "StrataIO", targets: ["StrataIO"]),
        .library(name: "StrataWorkload", targets: ["StrataWorkload"]),
        .library(name: "StrataQuery", targets: ["StrataQuery"]),
        .executable(name: "strata", targets: ["strata"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CLZ4",
            path: "Sources/CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"]), .brew(["lz4"])]
        ),
        // CRC-32C through the CPU's CRC instructions (C, because Swift has no access to target intrinsics); the
        // table-driven Swift code in StrataFormat is the fallback and the reference.
        .target(name: "CCRC32C"),
        .target(name: "StrataFormat", dependencies: ["CLZ4", "CCRC32C"]),
        .target(
            name: "StrataIO",
            dependencies: [.product(name: "SystemPackage", package: "swift-system")]
        ),
        .target(
            name: "StrataStorage",
            dependencies: [
                "StrataFormat", "StrataIO",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "Strata", dependencies: ["StrataFormat", "StrataStorage", "StrataQuery"]),
        // The predicate language (NSPredicate format strings, evaluation in memory, sort keys): Foundation only,
        // so that the object graph and the store can both use it.
        .target(name: "StrataQuery"),
        // The company workload of WORKLOAD.md (exact data generator), shared by the demo and Benchmarks/.
        .target(name: "StrataWorkload"),
        .executableTarget(
            name: "strata",
            dependencies: [
                "Strata", "StrataFormat", "StrataStorage", "StrataWorkload",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A child process for the crash tests: commits transactions and acknowledges each on stdout
        // until it is killed (Tests/StrataStorageTests/ProcessKillTests.swift).
        .executableTarget(
            name: "StrataCrashWriter",
            dependencies: ["StrataStorage", .product(name: "Logging", package: "swift-log")],
            path: "Tests/StrataCrashWriter"
        ),
        .target(
            name: "StrataTestSupport",
            dependencies: [
                "StrataFormat", "StrataIO", "StrataStorage", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "StrataFormatTests", dependencies: ["StrataFormat", "StrataTestSupport"]),
        .testTarget(name: "StrataIOTests", dependencies: ["StrataIO", "StrataTestSupport"]),
        .testTarget(
            name: "StrataStorageTests",
            dependencies: [
                "StrataStorage", "StrataTestSupport", "StrataWorkload", "StrataCrashWriter",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "StrataWorkloadTests", dependencies: ["StrataWorkload"]),
        .testTarget(name: "StrataQueryTests", dependencies: ["StrataQuery"]),
        .testTarget(name: "StrataTests", dependencies: ["Strata", "StrataTestSupport"]),
        // Runs the built `strata` binary as a subprocess (fsck, compact, info, dump and their exit codes), on
        // engine stores and on stores of the object graph built through Strata.
        .testTarget(
            name: "StrataCLITests",
            dependencies: ["strata", "Strata", "StrataFormat", "StrataStorage", "StrataTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
