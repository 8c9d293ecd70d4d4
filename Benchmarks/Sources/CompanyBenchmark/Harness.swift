import Foundation
import Synchronization

// MARK: - Output

/// Writes one line to standard output at once (unbuffered), so that a crash never loses a figure and a parent
/// process reading a child's pipe sees each line as soon as it is written.
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// A note for the person running the benchmark, on standard error so that standard output stays one line per
/// figure: `# ` followed by the text.
func note(_ line: String) {
    FileHandle.standardError.write(Data(("# " + line + "\n").utf8))
}

/// How a figure compares: WORKLOAD.md's advantage is strata/sqlite for rates and sqlite/strata for times and bytes,
/// so that above 1 always means Strata wins.
enum Better {
    case higher
    case lower
}

/// Every figure printed so far, by `<id>.<level>`: the graph-pg level takes its GRDB column from the graph level's.
let printedFigures = Mutex<[String: (strata: Double?, sqlite: Double?)]>([:])

/// Prints a figure in WORKLOAD.md's format: `<id>.<level> <strata> <sqlite> <unit> <advantage>`, with `-` for a
/// missing value.
func emitFigure(_ id: String, _ level: String, strata: Double?, sqlite: Double?, unit: String, better: Better) {
    printedFigures.withLock { $0["\(id).\(level)"] = (strata, sqlite) }
    var advantage = "-"
    if let strata, let sqlite, strata > 0, sqlite > 0 {
        advantage = String(format: "%.2f", better == .higher ? strata / sqlite : sqlite / strata)
    }
    emit("\(id).\(level) \(format(strata)) \(format(sqlite)) \(unit) \(advantage)")
}

/// A figure that cannot be measured yet: `<id>.<level> - - <unit> -`, with the reason on standard error.
func emitUnavailable(_ id: String, _ level: String, unit: String, because reason: String) {
    emit("\(id).\(level) - - \(unit) -")
    note("\(id).\(level) not measured: \(reason)")
}

/// Large values as integers, small ones with four significant digits, nil as `-`.
func format(_ value: Double?) -> String {
    guard let value else { return "-" }
    if value >= 1000 { return String(format: "%.0f", value) }
    if value >= 100 { return String(format: "%.1f", value) }
    if value >= 1 { return String(format: "%.3f", value) }
    return String(format: "%.4g", value)
}

/// `1234567` as `1,234,567`.
func grouped(_ value: Int) -> String {
    let digits = String(value.magnitude)
    var result = ""
    for (index, character) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
        result.append(character)
    }
    return value < 0 ? "-" + result : result
}

// MARK: - Failing loudly

/// A check of a benchmark's own results failed: the figure is wrong and must not be printed.
struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Throws ``BenchmarkFailure`` when `condition` is false.
func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw BenchmarkFailure("check failed: " + message()) }
}

// MARK: - Timing

/// Seconds since an arbitrary point, from the monotonic clock.
func now() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) * 1e-9
}

/// Runs `body` and returns how many seconds it took.
func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = now()
    try body()
    return now() - start
}

/// The median of some values (the mean of the middle two for an even count).
func median(_ values: [Double]) -> Double {
    precondition(!values.isEmpty)
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// Takes a figure `repetitions` times for each side, alternating the sides and which goes first (S Q, Q S, S Q,
/// ...) so that drift on a noisy machine hits both, and returns the median of each side's measurements.
func alternate(
    _ repetitions: Int, strata: (Int) throws -> Double, sqlite: (Int) throws -> Double
) throws -> (strata: Double, sqlite: Double) {
    var strataValues: [Double] = []
    var sqliteValues: [Double] = []
    for repetition in 0..<repetitions {
        if repetition % 2 == 0 {
            strataValues.append(try strata(repetition))
            sqliteValues.append(try sqlite(repetition))
        } else {
            sqliteValues.append(try sqlite(repetition))
            strataValues.append(try strata(repetition))
        }
    }
    return (median(strataValues), median(sqliteValues))
}

// MARK: - Memory

/// A field of /proc/self/status in bytes (`VmRSS`, `VmHWM`), which the kernel gives in kB.
func processStatus(_ field: String) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
        let number =
            line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }
            ?? 0
        return number * 1024
    }
    return 0
}

// MARK: - Files

/// The total size in bytes of the regular files under `path` (a file or a directory), recursively.
func bytesOnDisk(_ path: String) -> UInt64 {
    var info = stat()
    guard lstat(path, &info) == 0 else { return 0 }
    if (info.st_mode & S_IFMT) == S_IFREG { return UInt64(info.st_size) }
    guard (info.st_mode & S_IFMT) == S_IFDIR,
        let entries = try? FileManager.default.contentsOfDirectory(atPath: path)
    else { return 0 }
    return entries.reduce(0) { $0 + bytesOnDisk(path + "/" + $1) }
}

/// The size of one file in bytes, 0 when it does not exist.
func fileSize(_ path: String) -> UInt64 {
    var info = stat()
    return stat(path, &info) == 0 ? UInt64(info.st_size) : 0
}

/// Removes a file or directory tree if it exists.
func remove(_ path: String) {
    if FileManager.default.fileExists(atPath: path) { try? FileManager.default.removeItem(atPath: path) }
}

/// Copies a store (a directory, or one file) and syncs the copy, its files and its directory. A figure that times work
/// on a copy made just before would otherwise also time writing the copy to the disk: the first sync of a file (a
/// checkpoint's, a commit's) flushes every dirty page of it, the copy's included, which a store in use never holds.
/// Both sides' copies go through this.
func copyDurably(_ source: String, to destination: String) throws {
    try FileManager.default.copyItem(atPath: source, toPath: destination)
    var isDirectory: ObjCBool = false
    _ = FileManager.default.fileExists(atPath: destination, isDirectory: &isDirectory)
    let directory = isDirectory.boolValue ? destination : (destination as NSString).deletingLastPathComponent
    var paths = [directory]
    if isDirectory.boolValue {
        paths += try FileManager.default.contentsOfDirectory(atPath: destination).map { destination + "/" + $0 }
    } else {
        paths.append(destination)
    }
    for path in paths {
        let descriptor = open(path, O_RDONLY)
        try check(descriptor >= 0, "cannot open \(path) to sync it")
        defer { close(descriptor) }
        try check(fsync(descriptor) == 0, "cannot sync \(path)")
    }
}

/// Removes an SQLite database and its `-wal` and `-shm` files.
func removeDatabase(_ path: String) {
    for suffix in ["", "-wal", "-shm", "-journal"] { remove(path + suffix) }
}

// MARK: - Hashing

/// 64-bit FNV-1a of some bytes: the name check of the lookups (both sides hash the strings they decoded).
@inline(__always)
func fnv1a<S: Sequence>(_ bytes: S) -> UInt64 where S.Element == UInt8 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
    return hash
}
