// swift-tools-version:6.1
//
// The company workload of WORKLOAD.md, Strata against SQLite side by side (issue 11).
// A package of its own so that the library never depends on SQLite: it depends on the root package by path
// and on GRDB.swift. Run it with `swift run -c release CompanyBenchmark 1000000` (see README.md).
import PackageDescription

let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v15)],
    // `--traits Postgres` adds the graph-pg level (the graph figures on the PostgreSQL store). Off by default: its
    // first release build compiles postgres-nio, SwiftNIO and swift-crypto, about 25 minutes on 2 busy cores.
    traits: [
        .trait(name: "Postgres", description: "The graph-pg level: the object-graph figures on the PostgreSQL store")
    ],
    dependencies: [
        .package(
            name: "Strata", path: "..",
            traits: [.trait(name: "Postgres", condition: .when(traits: ["Postgres"]))]),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        .executableTarget(
            name: "CompanyBenchmark",
            dependencies: [
                .product(name: "StrataFormat", package: "Strata"),
                .product(name: "StrataStorage", package: "Strata"),
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataWorkload", package: "Strata"),
                .product(name: "StrataPostgres", package: "Strata", condition: .when(traits: ["Postgres"])),
                .product(name: "StrataTestSupport", package: "Strata", condition: .when(traits: ["Postgres"])),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
            ],
            path: "Sources/CompanyBenchmark"
        )
    ],
    swiftLanguageModes: [.v6]
)
