import Foundation
import StrataStorage

/// The human report of `strata demo`: one line per timed step as it ends, then the store's files and counters.
///
/// ```
/// step                                 time        count                  rate
/// save (1 transaction)              0.412 s      100,100     242,961 objects/s
/// ```
struct DemoReport {
    private let clock = ContinuousClock()

    /// Runs `body`, then prints its name, duration and, when `count` is given, its rate in `unit`s per second.
    func measure<T>(_ name: String, count: Int? = nil, unit: String = "objects", _ body: () throws -> T) rethrows -> T {
        let start = clock.now
        let result = try body()
        let seconds = Self.seconds(clock.now - start)
        var line = Self.pad(name, 30) + Self.leftPad(String(format: "%.3f s", seconds), 11)
        if let count {
            line += Self.leftPad(Self.grouped(count), 13)
            if seconds > 0 {
                line += Self.leftPad(Self.grouped(Int((Double(count) / seconds).rounded())) + " \(unit)/s", 23)
            }
        }
        print(line)
        // Each step's line before the engine's log lines (standard error), even when standard output is a pipe.
        fflush(nil)
        return result
    }

    func printHeader() {
        print()
        print(Self.pad("step", 30) + Self.leftPad("time", 11) + Self.leftPad("count", 13) + Self.leftPad("rate", 23))
    }

    /// Prints every regular file under `directory` with its size, and their total.
    func printFiles(in directory: String) {
        print()
        print("files in \(directory):")
        let files = FileManager.default
        var total = 0
        let paths = ((try? files.subpathsOfDirectory(atPath: directory)) ?? []).sorted()
        for path in paths {
            let attributes = try? files.attributesOfItem(atPath: directory + "/" + path)
            guard attributes?[.type] as? FileAttributeType == .typeRegular else { continue }
            let size = (attributes?[.size] as? NSNumber)?.intValue ?? 0
            total += size
            print("  " + Self.pad(path, 28) + Self.leftPad(Self.grouped(size), 15) + " bytes")
        }
        print("  " + Self.pad("total", 28) + Self.leftPad(Self.grouped(total), 15) + " bytes")
    }

    /// Prints the coordinator's row cache counters at some moments: hits (faults filled without the store),
    /// misses (rows read from the store) and entries (one per object ID some context holds).
    func printRowCache(_ moments: [(when: String, statistics: RowCacheStatistics)]) {
        print()
        for (when, statistics) in moments {
            print(
                "row cache \(when): \(Self.grouped(statistics.hits)) hits, \(Self.grouped(statistics.misses)) misses, "
                    + "\(Self.grouped(statistics.entries)) entries (\(Self.grouped(statistics.cachedRows)) with a row)"
            )
        }
    }

    /// Prints the blob segments: their sizes, live blobs and bytes.
    func printBlobs(_ segments: [BlobSegmentStatistics]) {
        print()
        for segment in segments {
            print(
                "blob segment \(segment.segmentID): \(Self.grouped(segment.liveBlobs)) blobs, "
                    + "\(Self.grouped(Int(segment.liveBytes))) live bytes, "
                    + "\(Self.grouped(Int(segment.deadBytes))) dead, file \(Self.grouped(Int(segment.fileBytes))) bytes"
            )
        }
    }

    /// Prints what the reopen's recovery did and the engine's counters since that reopen.
    func printEngine(recovery: RecoveryReport, statistics: StoreStatistics) {
        print()
        print(
            "recovery at reopen: checkpoint generation \(recovery.checkpointGeneration), "
                + "\(recovery.replayedTransactions) transactions replayed, "
                + "\(Self.grouped(Int(recovery.discardedLogBytes))) log bytes discarded"
        )
        print(
            "engine since reopen: \(statistics.checkpointCount) checkpoints, \(statistics.commitCount) commits, "
                + "log \(Self.grouped(Int(statistics.walBytes))) bytes, "
                + "page file \(Self.grouped(Int(statistics.pageFileBytes))) bytes, "
                + "page cache \(Self.grouped(statistics.pageCacheHits)) hits / "
                + "\(Self.grouped(statistics.pageCacheMisses)) misses"
        )
    }

    /// The machine the figures were measured on (STYLE.md: state hardware next to numbers): cores, memory, system.
    static var machineDescription: String {
        let process = ProcessInfo.processInfo
        let gibibytes = Double(process.physicalMemory) / Double(1 << 30)
        return "\(process.activeProcessorCount) cores, \(String(format: "%.1f", gibibytes)) GiB, "
            + process.operatingSystemVersionString
    }

    // MARK: - Formatting

    /// `1234567` as `"1,234,567"`, independent of the locale.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return value < 0 ? "-" + result : result
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    private static func leftPad(_ text: String, _ width: Int) -> String {
        text.count >= width ? " " + text : String(repeating: " ", count: width - text.count) + text
    }
}
