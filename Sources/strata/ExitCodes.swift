import ArgumentParser
import Foundation
import Logging
import StrataStorage

/// The exit codes of `strata fsck`, `compact`, `info` and `dump`, modelled on fsck(8).
///
/// | code | meaning |
/// | --- | --- |
/// | 0 | no problem: the store is clean (or the command did what was asked) |
/// | 1 | problems were found and repaired (`fsck --repair`): the store is clean now |
/// | 4 | problems were found and are still there (damage that only `--salvage` works around) |
/// | 8 | operational error: no store there, the store is open in another process, an I/O error |
/// | 64 | usage error (ArgumentParser's `EX_USAGE`; fsck(8) uses 16) |
///
/// Codes combine as in fsck(8) only in that a larger one wins: a run reports its worst outcome.
enum StoreExitCode: Int32, Comparable {
    case clean = 0
    case repaired = 1
    case problemsLeft = 4
    case operationalError = 8

    var exitCode: ExitCode { ExitCode(rawValue) }

    static func < (lhs: StoreExitCode, rhs: StoreExitCode) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The outcome of a storage error that stopped a command: damage it met is 4, anything else 8.
    static func of(_ error: Error) -> StoreExitCode {
        if case StorageError.corruption = error { return .problemsLeft }
        return .operationalError
    }

    /// The paragraph every store command's `--help` ends with.
    static let help = """
        Exit codes (as fsck(8)): 0 clean; 1 problems repaired, the store is clean now; 4 problems left; \
        8 operational error (no store, the store is open in another process, an I/O error); 64 usage error.
        """
}

// MARK: - Shared by the store commands

/// The arguments every store command takes: the store, `--json`, `--verbose`.
struct StoreCommandOptions: ParsableArguments {
    @Argument(help: "The store's directory.")
    var store: String

    @Flag(name: .long, help: "Print one JSON document (JSON Lines for rows) instead of text.")
    var json = false

    @Flag(name: .shortAndLong, help: "Log the engine's messages (recovery, checkpoints) to standard error.")
    var verbose = false

    /// Sends the engine's log to standard error: warnings and errors, or everything from debug up with
    /// `--verbose`. Call once per process.
    func bootstrap() {
        let level: Logger.Level = verbose ? .debug : .warning
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }

    /// A configuration that never creates a store and logs through the bootstrapped handler.
    var configuration: StoreConfiguration {
        StoreConfiguration(createIfMissing: false, logger: Logger(label: "strata"))
    }
}

/// Output helpers for the store commands.
enum Output {
    /// Writes `text` and a newline to standard error.
    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Prints `value` as one JSON document (sorted keys, pretty-printed).
    static func printJSON<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// One line of JSON Lines (sorted keys).
    static func jsonLine<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// A byte count with thousands separators, e.g. `1,234,567`.
    static func count<T: BinaryInteger>(_ value: T) -> String {
        let digits = String(value)
        var result = ""
        for (index, character) in digits.reversed().enumerated() {
            if index > 0, index % 3 == 0, character != "-" { result.append(",") }
            result.append(character)
        }
        return String(result.reversed())
    }

    /// The error of a failed command, as the message standard error gets.
    static func describe(_ error: Error, store: String) -> String {
        switch error {
        case StorageError.storeLocked:
            "the store at \(store) is open in another process (its lock is held); close that process first"
        case StorageError.storeNotFound:
            "no Strata store at \(store)"
        default:
            "\(error)"
        }
    }
}
