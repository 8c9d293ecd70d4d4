import ArgumentParser
import Foundation
import Logging
import StrataStorage

/// `strata demo`: stores the company workload through the object graph in a fresh store, reopens it with a new
/// coordinator, checks every object comes back, and reports how long each step took.
///
/// Steps, each timed and printed as it ends:
///
/// 1. Remove the previous demo store at DIRECTORY (see "Fresh store" below); create a coordinator for the company
///    model (``CompanyModel``) and add a Strata store in DIRECTORY.
/// 2. Insert the 100 departments of WORKLOAD.md (``CompanyWorkload``) as ``Department`` objects, then the N
///    employees as ``Employee`` objects: setting each one's `department` adds it to the department's
///    `employees` (the inverse), and every 1,000th gets a 64 KiB photo (external storage: a blob segment).
/// 3. Save: one save, one engine transaction. Check every object got a permanent ID in the store and a row of its
///    own; release the objects; close (remove the store from the coordinator, which checkpoints).
/// 4. Reopen with a new coordinator and context; fetch every employee as a fault; fire the faults by reading
///    name and salary, and check the count, the salary sum and a fingerprint of the names and salaries against
///    the generator; check the photos and the departments.
/// 5. In a new context, look up 10,000 random employees by object IDs rebuilt from their row IDs (some also
///    through a URI round trip), each checked against the generator; scan the employee table with the engine.
///    List every department's employees through the to-many relationship (faults from an index range, no
///    employee row read), then delete the last department: the cascade deletes its employees.
/// 6. Close, and print the store's files, the row cache's counters, the blob segments, what recovery did at the
///    reopen, and the engine's counters.
///
/// Fresh store: the demo always starts from an empty store so that runs are repeatable. If DIRECTORY exists it
/// must be empty or hold a Strata store and nothing else (only the files of FORMAT.md §1), whose files are
/// removed first; anything else is refused, so a mistyped path never deletes unrelated files. The store is left
/// in place afterwards for inspection.
///
/// Any check that does not hold stops the demo with exit code 1 and a message naming the check; a directory it
/// refuses is a usage error (64), and a storage or I/O error an operational error (8), as for the store
/// commands.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Store the company workload through the object graph in a fresh store, verify it, time each step.",
        discussion: """
            Creates DIRECTORY (removing a previous demo store there first: the demo always starts fresh and \
            refuses a directory that holds anything but a Strata store's files), inserts 100 departments and N employees \
            (every 1,000th with a 64 KiB photo, kept in a blob segment) as managed objects, saves them in one \
            save, checks their permanent IDs and closes. It then reopens the store with a new coordinator, \
            fetches every employee as a fault, fires the faults and checks the count, salary sum, names, photos \
            and departments against the generator, looks up 10,000 random employees by object ID in a new \
            context, lists each department's employees through the relationship, deletes one department \
            (cascading to its employees), and prints each step's time and rate, the row cache's counters and the \
            engine's report.
            """
    )

    @Argument(help: "The store directory (removed first if it holds a previous store).")
    var directory = "strata-demo-store"

    @Option(name: .long, help: "The number of employees to load (N).")
    var employees = 100_000

    @Option(
        name: .long,
        help: "When commits are durable: full (synced), normal (synced within 100 ms) or off (at checkpoints)."
    )
    var durability = DurabilityChoice.full

    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        guard employees >= 0 else { throw ValidationError("--employees must not be negative") }
        guard !directory.isEmpty else { throw ValidationError("the store directory must not be empty") }
    }

    func run() throws {
        logging.bootstrap()
        // The path exactly as given: standardizing it (resolving `..` without the file system) could name
        // another directory than the one the kernel resolves through a symbolic link.
        let demo = DemoRun(
            directory: directory,
            employeeCount: employees,
            durability: durability.engineValue,
            durabilityName: durability.rawValue
        )
        do {
            try demo.run()
        } catch let failure as DemoFailure {
            Output.error("strata demo: \(failure)")
            throw failure.refusal ? StoreExitCode.usage.exitCode : ExitCode.failure
        } catch {
            Output.error("strata demo: \(Output.describe(error, store: directory))")
            throw StoreExitCode.operationalError.exitCode
        }
    }
}

extension DemoCommand {
    /// The values of `--durability`.
    enum DurabilityChoice: String, ExpressibleByArgument, CaseIterable {
        case full, normal, off

        /// The engine's setting for this choice.
        var engineValue: StoreConfiguration.Durability {
            switch self {
            case .full: .full
            case .normal: .normal(maxDelayMilliseconds: 100)
            case .off: .off
            }
        }
    }
}
