// swift-tools-version:6.1
//
// Strata: Core Data for every platform Swift runs on.
// Modules by layer, dependencies pointing down (see ARCHITECTURE in the team docs):
//   CLZ4, CCRC32C -> StrataFormat -> StrataIO -> StrataStorage -> Strata -> strata (CLI)
// CPrefetch (a memory hint, C because Swift has no access to the builtin) sits below StrataStorage and Strata.
// StrataImport (reading Core Data's SQLite stores, over CSQLite: Debian's libsqlite3-dev) sits beside the CLI, above
// Strata: the core library never links SQLite. Only StrataImport, the CLI and the import tests import CSQLite.
// StrataLock (the one lock) sits below StrataIO, StrataQuery and everything above them.
// Fuzz/ and Benchmarks/ are nested packages so the library never depends on what only they need.
// StrataPostgres (the PostgreSQL store, over postgres-nio) is compiled only with the package trait `Postgres`
// (`swift build --traits Postgres`): without it, postgres-nio is neither fetched nor built, and the module is empty.
//
// Custom compile flags (none is set by default; pass one to every module with `-Xswiftc -D<FLAG>`):
//   STRATA_TSAN_LOCKS  `Lock` (Sources/StrataLock/Lock.swift) is a pthread mutex instead of
//                      `Synchronization.Mutex`, whose contended handover happens in the uninstrumented runtime
//                      where ThreadSanitizer cannot see it (hundreds of false reports per run). Set by
//                      Scripts/tsan for its `--sanitize=thread` build; not for shipping builds.

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
        .library(name: "StrataImport", targets: ["StrataImport"]),
        .library(name: "StrataPostgres", targets: ["StrataPostgres"]),
        // For Benchmarks/ (its throwaway PostgreSQL cluster): not an API of Strata.
        .library(name: "StrataTestSupport", targets: ["StrataTestSupport"]),
        .executable(name: "strata", targets: ["strata"]),
    ],
    traits: [
        .trait(
            name: "Postgres",
            description: "The PostgreSQL store (module StrataPostgres, over postgres-nio) and its tests; off by default"
        )
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Only under the trait `Postgres` (SwiftPM then resolves it; without the trait it is never fetched).
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CLZ4",
            path: "Sources/CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"]), .brew(["lz4"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // CRC-32C through the CPU's CRC instructions (C, because Swift has no access to target intrinsics); the
        // table-driven Swift code in StrataFormat is the fallback and the reference.
        .target(name: "CCRC32C"),
        // Linux calls Glibc's Swift module does not export (they need _GNU_SOURCE): a file's identity and size through
        // `statx` without timestamps (reading timestamps before each write made every durable commit's sync slower),
        // and `sync_file_range` to start writing a checkpoint's pages while the next ones are encoded.
        .target(name: "CSystemCalls"),
        // A hint to fetch memory ahead of a read (`__builtin_prefetch`: Swift has no access to it), for the B-tree
        // seek's leaves and the object graph's hash tables, whose lines are mostly cold.
        .target(name: "CPrefetch"),
        // Strata's one lock, below every module that locks: `Synchronization.Mutex`, or a pthread mutex under
        // STRATA_TSAN_LOCKS (see the top of this file). `package` access: not part of any public API.
        .target(name: "StrataLock"),
        .target(name: "StrataFormat", dependencies: ["CLZ4", "CCRC32C"]),
        .target(
            name: "StrataIO",
            dependencies: ["StrataLock", "CSystemCalls", .product(name: "SystemPackage", package: "swift-system")]
        ),
        .target(
            name: "StrataStorage",
            dependencies: [
                "StrataFormat", "StrataIO", "StrataLock", "CPrefetch",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "Strata", dependencies: ["StrataFormat", "StrataLock", "StrataStorage", "StrataQuery", "CPrefetch"]),
        // The predicate language (NSPredicate format strings, evaluation in memory, sort keys): Foundation and
        // StrataLock only, so that the object graph and the store can both use it.
        .target(name: "StrataQuery", dependencies: ["StrataLock"]),
        // A PersistentStore on PostgreSQL (README, "A PostgreSQL store"). Its sources are inside `#if Postgres`:
        // without the trait the module is empty and postgres-nio is not a dependency.
        .target(
            name: "StrataPostgres",
            dependencies: [
                "Strata", "StrataFormat", "StrataLock", "StrataQuery",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `strata import`: a Core Data SQLite store (Z-tables, metadata plist, external binaries) into a Strata store.
        .target(name: "StrataImport", dependencies: ["Strata", "CSQLite"]),
        // The company workload of WORKLOAD.md (exact data generator), shared by the demo and Benchmarks/.
        .target(name: "StrataWorkload"),
        .executableTarget(
            name: "strata",
            dependencies: [
                "Strata", "StrataFormat", "StrataImport", "StrataStorage", "StrataWorkload",
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
                "StrataFormat", "StrataIO", "StrataLock", "StrataStorage",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "StrataFormatTests", dependencies: ["StrataFormat", "StrataTestSupport"]),
        .testTarget(name: "StrataIOTests", dependencies: ["StrataIO", "StrataTestSupport"]),
        .testTarget(
            name: "StrataStorageTests",
            dependencies: [
                "StrataLock", "StrataStorage", "StrataTestSupport", "StrataWorkload", "StrataCrashWriter",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "StrataWorkloadTests", dependencies: ["StrataWorkload"]),
        .testTarget(name: "StrataQueryTests", dependencies: ["StrataQuery"]),
        // The other process of the remote-change tests: saves through a coordinator of its own
        // (Tests/StrataTests/RemoteChangeTests.swift).
        .executableTarget(name: "StrataGraphWriter", dependencies: ["Strata"], path: "Tests/StrataGraphWriter"),
        .testTarget(
            name: "StrataTests",
            dependencies: ["Strata", "StrataLock", "StrataPostgres", "StrataTestSupport", "StrataGraphWriter"]),
        // The other process of the PostgreSQL store's two-process test (Tests/StrataPostgresTests).
        .executableTarget(
            name: "StrataPostgresWriter", dependencies: ["Strata", "StrataPostgres"], path: "Tests/StrataPostgresWriter"
        ),
        .testTarget(
            name: "StrataPostgresTests",
            dependencies: [
                "Strata", "StrataLock", "StrataPostgres", "StrataQuery", "StrataTestSupport", "StrataPostgresWriter",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
            ]),
        // Builds SQLite files as Core Data lays them out (through the SQLite C API) and imports them.
        .target(
            name: "StrataImportTestSupport", dependencies: ["CSQLite", "StrataImport"],
            path: "Tests/StrataImportTestSupport"),
        .testTarget(name: "StrataImportTests", dependencies: ["Strata", "StrataImport", "StrataImportTestSupport"]),
        // Runs the built `strata` binary as a subprocess (fsck, compact, info, dump and their exit codes), on
        // engine stores and on stores of the object graph built through Strata.
        .testTarget(
            name: "StrataCLITests",
            dependencies: [
                "strata", "Strata", "StrataFormat", "StrataImportTestSupport", "StrataStorage", "StrataTestSupport",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
