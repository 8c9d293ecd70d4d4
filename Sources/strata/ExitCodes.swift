import ArgumentParser
import Foundation
import Logging
import StrataFormat
import StrataStorage

/// The exit codes of every `strata` command, modelled on fsck(8).
///
/// | code | meaning |
/// | --- | --- |
/// | 0 | no problem: the store is clean (or the command did what was asked) |
/// | 1 | problems were found and repaired (`fsck --repair`): the store is clean now; `demo`: a check failed |
/// | 4 | problems were found and are still there (damage that only `--salvage` works around), whatever the |
/// |   | command: `info` and `dump` print what they can and exit 4; `compact` and `--repair` refuse with 4 |
/// | 8 | operational error: no store there, the store is open in another process, an I/O error, a store |
/// |   | this version cannot read (unknown incompatible features) or may not write (`compact`, `--repair`) |
/// | 64 | usage error (ArgumentParser's `EX_USAGE`; fsck(8) uses 16): a bad option, `dump --page` past |
/// |   | the end, an argument that is not UTF-8, a directory `demo` refuses |
///
/// Codes combine as in fsck(8) only in that a larger one wins: a run reports its worst outcome.
enum StoreExitCode: Int32, Comparable {
    case clean = 0
    case repaired = 1
    case problemsLeft = 4
    case operationalError = 8
    case usage = 64

    var exitCode: ExitCode { ExitCode(rawValue) }

    static func < (lhs: StoreExitCode, rhs: StoreExitCode) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The outcome of an error that stopped a command: damage it met (a corrupt file, a stored row that breaks
    /// the format's rules) is 4, anything else 8.
    static func of(_ error: Error) -> StoreExitCode {
        switch error {
        case StorageError.corruption: .problemsLeft
        case is FormatError: .problemsLeft
        default: .operationalError
        }
    }

    /// The paragraph every store command's `--help` ends with.
    static let help = """
        Exit codes (as fsck(8)), the same for every command: 0 clean; 1 problems repaired, the store is clean \
        now; 4 problems left (info and dump print what they can; compact and --repair refuse); 8 operational \
        error (no store, the store is open in another process, an I/O error, a format or feature this version \
        cannot read or write); 64 usage error. With --json, every outcome, errors included, is a JSON document \
        on standard output.
        """
}

/// What `--json` prints when a command stops on an error (a usage error included), instead of its report:
///
/// ```
/// {"command":"fsck","error":{"kind":"notFound","message":"no Strata store at /x","path":"/x"},"exitCode":8}
/// ```
struct Failure: Encodable {
    struct Details: Encodable {
        /// `usage`, `notFound`, `locked`, `inUse`, `corruption`, `invalidRow`, `unsupportedFormat`, `readOnlyStore`,
        /// `notWritable`, `io`, `invalidArgument` or `error`.
        var kind: String
        var message: String
        /// The file or directory the error is about, when there is one.
        var path: String?
    }

    var command: String
    var error: Details
    var exitCode: Int32

    /// The kind, message and path of `error`, met while working on `store`.
    static func details(of error: Error, store: String?) -> Details {
        let message = Output.describe(error, store: store ?? "")
        switch error {
        case StorageError.storeNotFound(let path): return Details(kind: "notFound", message: message, path: path)
        case StorageError.storeLocked(let path): return Details(kind: "locked", message: message, path: path)
        case StorageError.storeInUse(let path, _): return Details(kind: "inUse", message: message, path: path)
        case StorageError.corruption(let file, _, _): return Details(kind: "corruption", message: message, path: file)
        case StorageError.unsupportedFormat(let path, let reason):
            let kind = reason.contains("read-only-compatible") ? "readOnlyStore" : "unsupportedFormat"
            return Details(kind: kind, message: message, path: path)
        case StorageError.io(let io):
            let kind = io.code == .readOnlyFileSystem || io.code == .permissionDenied ? "notWritable" : "io"
            return Details(kind: kind, message: message, path: io.path)
        case StorageError.invalidArgument: return Details(kind: "invalidArgument", message: message, path: store)
        case is FormatError: return Details(kind: "invalidRow", message: message, path: store)
        default: return Details(kind: "error", message: message, path: store)
        }
    }
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
            "the store at \(store) is being compacted or destroyed by another process (its lock is held exclusive)"
        case StorageError.storeInUse(_, let processes):
            processes.isEmpty
                ? "the store at \(store) is open in another process; close it first"
                : "the store at \(store) is open in process\(processes.count == 1 ? "" : "es") "
                    + processes.map(String.init).joined(separator: ", ") + "; close "
                    + (processes.count == 1 ? "it" : "them") + " first"
        case StorageError.storeNotFound:
            "no Strata store at \(store)"
        case is FormatError:
            "a stored value breaks the format's rules: \(error)"
        default:
            "\(error)"
        }
    }

    /// Reports an error that stops `command`: `strata <command>: <message><suffix>` on standard error and,
    /// with `json`, a ``Failure`` document on standard output.
    ///
    /// - Returns: the exit code to throw: `outcome`, else the one ``StoreExitCode/of(_:)`` gives.
    static func fail(
        _ command: String, _ error: Error, store: String?, json: Bool, outcome: StoreExitCode? = nil,
        suffix: String = ""
    ) -> ExitCode {
        let code = outcome ?? StoreExitCode.of(error)
        var details = Failure.details(of: error, store: store)
        details.message += suffix
        return fail(command, details, json: json, code: code)
    }

    /// Reports a failure whose details are known: standard error, and a ``Failure`` document (one line) with
    /// `json`.
    static func fail(_ command: String, _ details: Failure.Details, json: Bool, code: StoreExitCode) -> ExitCode {
        Output.error("strata \(command): \(details.message)")
        // One line, so that it is also a valid last line of `dump`'s JSON Lines.
        if json, let line = try? jsonLine(Failure(command: command, error: details, exitCode: code.rawValue)) {
            print(line)
        }
        return code.exitCode
    }
}
