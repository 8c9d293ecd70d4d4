import Foundation
import Logging

// CompanyBenchmark [N] [--scratch DIR] [--repetitions R] [--only W1,W3,W3.graph] [--keep]
//
// Runs WORKLOAD.md's company workload at N employees (default 1,000,000) on Strata and on SQLite, and prints one
// line per figure: `<id>.<level> <strata> <sqlite> <unit> <advantage>`. Notes (how each figure was taken, SQLite's
// query plans, the variants) go to standard error, prefixed with `# `. See README.md.

LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = .warning
    return handler
}

let usage = "usage: CompanyBenchmark [N] [--scratch DIR] [--repetitions R] [--only W1,W3,...] [--keep]"

func parseCount(_ text: String) -> Int? {
    Int(text.filter { $0 != "_" && $0 != "," })
}

func runMain() -> Int32 {
    var arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.first == ChildProcess.subcommand {
        do {
            try Child.run(Array(arguments.dropFirst()))
            return 0
        } catch {
            FileHandle.standardError.write(Data("CompanyBenchmark child: \(error)\n".utf8))
            return 1
        }
    }
    var count = 1_000_000
    var scratch: String?
    var repetitions = 3
    var only: Set<String>?
    var keep = false
    if let first = arguments.first, !first.hasPrefix("-") {
        guard let value = parseCount(first), value >= 1 else {
            FileHandle.standardError.write(Data("N must be a positive integer\n\(usage)\n".utf8))
            return 2
        }
        count = value
        arguments.removeFirst()
    }
    while !arguments.isEmpty {
        let option = arguments.removeFirst()
        func value() -> String? { arguments.isEmpty ? nil : arguments.removeFirst() }
        switch option {
        case "--scratch": scratch = value()
        case "--repetitions": repetitions = value().flatMap(Int.init) ?? 0
        case "--only": only = value().map { Set($0.split(separator: ",").map(String.init)) }
        case "--keep": keep = true
        case "-h", "--help":
            print(usage)
            return 0
        default:
            FileHandle.standardError.write(Data("unknown option \(option)\n\(usage)\n".utf8))
            return 2
        }
    }
    guard repetitions >= 1 else {
        FileHandle.standardError.write(Data("--repetitions needs a positive number\n".utf8))
        return 2
    }
    let directory = scratch ?? (NSTemporaryDirectory() + "/strata-company-benchmark-\(getpid())")
    note("CompanyBenchmark N=\(grouped(count)), \(repetitions) repetitions (median), scratch \(directory)")
    let benchmark = Benchmark(employeeCount: count, scratch: directory, repetitions: repetitions, only: only)
    defer { if !keep { remove(directory) } }
    do {
        try benchmark.run()
        return 0
    } catch {
        FileHandle.standardError.write(Data("CompanyBenchmark FAILED: \(error)\n".utf8))
        return 1
    }
}

exit(runMain())
