// swift-tools-version:6.1
//
// Strata's libFuzzer targets (issue 10): a package of its own, depending on the root package by path, so that
// the library never builds with sanitizers or fuzz entry points. Each `Fuzz*` executable target holds only the
// `LLVMFuzzerTestOneInput` entry point; the harness code is in `FuzzSupport`. `FuzzSeeds` writes the seed
// corpora under Corpus/ from the real encoders and is built without sanitizers (see README.md and `run`).
//
// Build and run through `Fuzz/run TARGET [SECONDS]` (it builds with
// `swift build -c release --sanitize=fuzzer --sanitize=address`).
import PackageDescription

let fuzzTargets = [
    "FuzzWALRecord", "FuzzPage", "FuzzRowRecord", "FuzzBlobSegment", "FuzzStoreOpen", "FuzzEngineOperations",
    "FuzzIndexKey",
]

let package = Package(
    name: "StrataFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Strata", path: ".."),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .target(
            name: "FuzzSupport",
            dependencies: [
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataStorage", package: "Strata"),
                .product(name: "StrataFormat", package: "Strata"),
                .product(name: "StrataIO", package: "Strata"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(name: "FuzzSeeds", dependencies: ["FuzzSupport"]),
        // The predicate language depends on Foundation only, and so does its target: not on FuzzSupport.
        .executableTarget(
            name: "FuzzPredicateParser", dependencies: [.product(name: "StrataQuery", package: "Strata")]),
        // Core Data model files (XML) through the loader: the object graph only, not FuzzSupport.
        .executableTarget(name: "FuzzModelFile", dependencies: [.product(name: "Strata", package: "Strata")]),
    ] + fuzzTargets.map { .executableTarget(name: $0, dependencies: ["FuzzSupport"]) },
    swiftLanguageModes: [.v6]
)
