// StrataCrashWriter STORE_DIR START_INDEX
// StrataCrashWriter --shared-writer STORE_DIR WORKER
// StrataCrashWriter --shared-reader STORE_DIR
//
// The child process of Tests/StrataStorageTests/ProcessKillTests.swift. It opens (or creates) the store
// in STORE_DIR with full durability and a small checkpoint threshold, so that checkpoints and log resets
// happen while it runs, then commits transactions START_INDEX, START_INDEX + 1, ... of the
// ``KillWorkload`` forever. After each commit returns it writes `ack <i>` on stdout, unbuffered: from
// then on transaction i must survive anything. The parent ends it with SIGKILL.
//
// With --shared-writer, it is one of several processes writing the same store at once (the multi-process stress
// test, Tests/StrataStorageTests/MultiProcessStressTests.swift): it commits worker WORKER's transactions of the
// ``SharedWorkload`` forever and writes `ack <j>` after transaction j returns. With --shared-reader it takes
// snapshots forever, checks each with ``SharedWorkload/check(_:readingBlobs:)`` and that no worker went back since
// the previous one, writes `seen <total>` after each, and exits with status 2 (`error <problem>` on stderr) when a
// snapshot is not a state some prefix of the commits explains.
//
// Exit codes: 2 for any error (described on stderr as `error <description>`), 64 for bad arguments.
//
// `STRATA_CRASH_WRITER_CHECKPOINT_BYTES` overrides the checkpoint threshold (64 KiB, a checkpoint every
// 20-odd transactions): set it lower to aim more kills at checkpoints and log resets.

import Logging
import StrataStorage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes all of `text` to a file descriptor, unbuffered (a line under PIPE_BUF reaches a pipe whole).
func writeAll(_ text: String, to descriptor: Int32) {
    var bytes = Array(text.utf8)
    bytes.withUnsafeMutableBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                // Nobody reads our output any more: the acknowledgement cannot be given, so stop.
                exit(2)
            }
            offset += written
        }
    }
}

func fail(_ description: String) -> Never {
    writeAll("error \(description)\n", to: STDERR_FILENO)
    exit(2)
}

func run(directory: String, start: UInt64) throws -> Never {
    var logger = Logger(label: "strata.crash-writer", factory: { StreamLogHandler.standardError(label: $0) })
    // Recovery reports at info level on every open; warnings (a discarded log tail) are worth keeping.
    logger.logLevel = .warning
    let threshold = getenv("STRATA_CRASH_WRITER_CHECKPOINT_BYTES").flatMap { UInt64(String(cString: $0)) } ?? 64 << 10
    let configuration = StoreConfiguration(
        createIfMissing: true, durability: .full, checkpointThresholdBytes: threshold, logger: logger)
    let store = try Store.open(at: directory, configuration: configuration)

    // The store must hold exactly the first `start` transactions, as the parent found when it checked.
    let snapshot = store.snapshot()
    let table = snapshot.table(named: KillWorkload.tableName)
    let found = try table.map { try snapshot.nextRowID(in: $0).rawValue - 1 } ?? 0
    guard found == start else {
        throw WorkloadMismatch(description: "the store holds transactions 0..<\(found), the parent said 0..<\(start)")
    }

    var model = KillWorkload.Model(transactionCount: start)
    while true {
        let step = model.next()
        try store.write { txn in try step.apply(to: txn) }
        writeAll("ack \(step.index)\n", to: STDOUT_FILENO)
    }
}

func sharedConfiguration() -> StoreConfiguration {
    var logger = Logger(label: "strata.crash-writer", factory: { StreamLogHandler.standardError(label: $0) })
    logger.logLevel = .error
    let threshold = getenv("STRATA_CRASH_WRITER_CHECKPOINT_BYTES").flatMap { UInt64(String(cString: $0)) } ?? 64 << 10
    return StoreConfiguration(
        createIfMissing: false, durability: .full, checkpointThresholdBytes: threshold, logger: logger)
}

func runSharedWriter(directory: String, worker: UInt32) throws -> Never {
    let store = try Store.open(at: directory, configuration: sharedConfiguration())
    while true {
        let sequence = try SharedWorkload.commitNext(worker: worker, store: store)
        writeAll("ack \(sequence)\n", to: STDOUT_FILENO)
    }
}

func runSharedReader(directory: String) throws -> Never {
    let store = try Store.open(at: directory, configuration: sharedConfiguration())
    var previous = SharedWorkload.Check()
    while true {
        let check = SharedWorkload.check(store.snapshot())
        if let problem = check.problems.first { fail("bad state: \(problem)") }
        if check.total < previous.total { fail("the total went back from \(previous.total) to \(check.total)") }
        for (worker, sequence) in previous.sequences where (check.sequences[worker] ?? 0) < sequence {
            fail("worker \(worker) went back from \(sequence) to \(check.sequences[worker] ?? 0)")
        }
        previous = check
        writeAll("seen \(check.total)\n", to: STDOUT_FILENO)
    }
}

let arguments = CommandLine.arguments
if arguments.count == 4, arguments[1] == "--shared-writer", let worker = UInt32(arguments[3]) {
    do { try runSharedWriter(directory: arguments[2], worker: worker) } catch { fail("\(error)") }
}
if arguments.count == 3, arguments[1] == "--shared-reader" {
    do { try runSharedReader(directory: arguments[2]) } catch { fail("\(error)") }
}
guard arguments.count == 3, let start = UInt64(arguments[2]) else {
    writeAll("usage: StrataCrashWriter STORE_DIR START_INDEX\n", to: STDERR_FILENO)
    exit(64)
}
do {
    try run(directory: arguments[1], start: start)
} catch {
    fail("\(error)")
}
