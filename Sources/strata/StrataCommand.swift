import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The `strata` command-line tool: a thin layer of subcommands over Strata's library API.
///
/// Exit codes follow fsck(8) in every command (``StoreExitCode``): 0 clean, 1 repaired (`demo`: a check
/// failed), 4 problems left, 8 operational error, 64 usage error; with `--json`, usage errors too are a JSON
/// document on standard output (``Failure``).
///
/// Before parsing, ``main()``:
/// 1. ignores `SIGXFSZ`, so that a write past the process's file-size limit (`RLIMIT_FSIZE`, `ulimit -f`)
///    fails with `EFBIG` and takes the error path of any failed write (the store is left as a crash would
///    leave it, and the message says "file too large") instead of killing the process;
/// 2. refuses an argument that is not valid UTF-8: paths are taken as UTF-8 text, and decoding other bytes
///    would name a different path (`coll\xff` would become `coll\u{FFFD}`), so no command ever touches it.
@main
struct StrataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Strata: Core Data for every platform Swift runs on, over its own crash-safe storage engine.",
        subcommands: [
            DemoCommand.self, FsckCommand.self, CompactCommand.self, InfoCommand.self, DumpCommand.self,
            GenerateCommand.self, MigrateCommand.self, ImportCommand.self,
        ]
    )

    static func main() {
        signal(SIGXFSZ, SIG_IGN)
        let json = CommandLine.arguments.contains("--json")
        let subcommand = CommandLine.arguments.dropFirst().first { !$0.hasPrefix("-") } ?? "strata"
        if let (index, bytes) = firstArgumentNotUTF8() {
            let details = Failure.Details(
                kind: "usage",
                message: "argument \(index) (\(escaped(bytes))) is not valid UTF-8: strata takes paths as UTF-8 text "
                    + "and will not use a different path than the one given; rename it, or name it through a "
                    + "symbolic link whose path is UTF-8",
                path: nil)
            Self.exit(withError: Output.fail(subcommand, details, json: json, code: .usage))
        }
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let exit as ExitCode {
            // The command reported its outcome itself (its report, or a ``Failure`` with --json).
            Self.exit(withError: exit)
        } catch {
            let code = exitCode(for: error)
            if json, code.rawValue == StoreExitCode.usage.rawValue {
                let arguments = Array(CommandLine.arguments.dropFirst())
                let operands = arguments.filter { !$0.hasPrefix("-") }
                let details = Failure.Details(
                    kind: "usage", message: fullMessage(for: error).trimmingCharacters(in: .whitespacesAndNewlines),
                    path: operands.dropFirst().first)
                Self.exit(withError: Output.fail(subcommand, details, json: true, code: .usage))
            }
            Self.exit(withError: error)
        }
    }

    /// The first argument (counting from 1) whose bytes are not valid UTF-8, and its bytes.
    static func firstArgumentNotUTF8() -> (Int, [UInt8])? {
        for index in 1..<Int(CommandLine.argc) {
            guard let pointer = CommandLine.unsafeArgv[index] else { continue }
            if String(validatingCString: pointer) == nil {
                let length = strlen(pointer)
                let bytes = UnsafeRawBufferPointer(start: pointer, count: length).map { $0 }
                return (index, bytes)
            }
        }
        return nil
    }

    /// Printable ASCII as it is, every other byte as `\xNN`.
    static func escaped(_ bytes: [UInt8]) -> String {
        bytes.map { (0x20..<0x7F).contains($0) ? String(UnicodeScalar($0)) : String(format: "\\x%02x", $0) }
            .joined()
    }
}
