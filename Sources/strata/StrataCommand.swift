import ArgumentParser

/// The `strata` command-line tool: a thin layer of subcommands over Strata's library API.
///
/// Exit codes: 0 on success; 1 when a subcommand fails (a check of `demo` that does not hold, a storage
/// error), with the reason on standard error; 64 for a usage error (ArgumentParser's `EX_USAGE`).
@main
struct StrataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Strata: Core Data for every platform Swift runs on, over its own crash-safe storage engine.",
        subcommands: [DemoCommand.self, FsckCommand.self, CompactCommand.self, InfoCommand.self, DumpCommand.self]
    )
}
