// Writes the seed corpora from the real encoders, and helps turn crashers into regression tests (README.md).
//
//   swift run --scratch-path .build/seeds FuzzSeeds [DIRECTORY]     seeds into DIRECTORY/TARGET/ (default Corpus)
//   swift run --scratch-path .build/seeds FuzzSeeds store-files FILE
//       prints the files a FuzzStoreOpen input lays out (checksums already fixed as its mode says) as a Swift
//       dictionary literal of base64 strings, for a regression test in Tests/StrataStorageTests
//   swift run --scratch-path .build/seeds FuzzSeeds base64 FILE       prints any input as one base64 string
//   swift run --scratch-path .build/seeds FuzzSeeds reproductions FailCases
//       writes FailCases/FuzzStoreOpen/<original>-format2: format-2 stores reproducing crashers whose inputs are
//       format-1 stores (Sources/FuzzSupport/Reproductions.swift)
import Foundation
import FuzzSupport

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "store-files" where arguments.count == 2:
        let data = try Data(contentsOf: URL(fileURLWithPath: arguments[1]))
        var image = data.withUnsafeBytes { StoreImage(decoding: $0) }
        image.reseal()
        // Multi-line string literals, lines cut with a trailing backslash (which joins them again).
        print("[  // mode 0x\(String(image.mode, radix: 16)) (bit 4: FuzzStoreOpen also writes after a clean verify)")
        for (name, bytes) in image.files {
            var base64 = Substring(Data(bytes).base64EncodedString())
            print("    \"\(name)\": \"\"\"")
            while !base64.isEmpty {
                let line = base64.prefix(100)
                base64 = base64.dropFirst(100)
                print("        \(line)\(base64.isEmpty ? "" : "\\")")
            }
            print("        \"\"\",")
        }
        print("]")
    case "reproductions" where arguments.count == 2:
        let directory = URL(fileURLWithPath: arguments[1]).appendingPathComponent("FuzzStoreOpen")
        let reproductions = try Reproductions.make { name in
            Array(try Data(contentsOf: directory.appendingPathComponent(name)))
        }
        for (name, bytes) in reproductions {
            try Data(bytes).write(to: directory.appendingPathComponent(name))
            print("FuzzStoreOpen/\(name): \(bytes.count) bytes")
        }
    case "base64" where arguments.count == 2:
        print(try Data(contentsOf: URL(fileURLWithPath: arguments[1])).base64EncodedString())
    default:
        let root = arguments.first ?? "Corpus"
        for (target, seeds) in try SeedCorpus.make().sorted(by: { $0.key < $1.key }) {
            let directory = URL(fileURLWithPath: root).appendingPathComponent(target)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            for seed in seeds {
                try Data(seed.bytes).write(to: directory.appendingPathComponent(seed.name))
                print("\(target)/\(seed.name): \(seed.bytes.count) bytes")
            }
        }
    }
} catch {
    print("FuzzSeeds: \(error)")
    exit(1)
}
