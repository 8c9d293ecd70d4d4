// StrataCrashWriter STORE_DIR START_INDEX
//
// The child process of Tests/StrataStorageTests/ProcessKillTests.swift. It opens (or creates) the store
// in STORE_DIR with full durability and a small checkpoint threshold, so that checkpoints and log resets
// happen while it runs, then commits transactions START_INDEX, START_INDEX + 1, ... of the
// ``KillWorkload`` forever. After each commit returns it writes `ack <i>` on stdout, unbuffered: from
// then on transaction i must survive anything. The parent ends it with SIGKILL.
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

let arguments = CommandLine.arguments
guard arguments.count == 3, let start = UInt64(arguments[2]) else {
    writeAll("usage: StrataCrashWriter STORE_DIR START_INDEX\n", to: STDERR_FILENO)
    exit(64)
}
do {
    try run(directory: arguments[1], start: start)
} catch {
    fail("\(error)")
}
