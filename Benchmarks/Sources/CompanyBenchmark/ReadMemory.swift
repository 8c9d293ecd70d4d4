import Foundation
import GRDB
import StrataStorage
import StrataWorkload

/// The peak memory of reading (issue 15's "memory" rule): W3's lookups and then a full scan of the employees, each
/// side in a child process of its own on the N-row stores W1 left, the peak RSS reset before each part.
///
/// Strata reads committed pages through a shared read-only mapping of the page file: the pages it touches count in
/// its RSS as file-backed memory (the kernel's page cache, reclaimable, shared with every other reader of the file),
/// not as memory it allocated. SQLite copies pages into its own cache (2 MB by default), allocated memory. So the
/// note gives the peak and, after each part, the anonymous (allocated) and file-backed parts of the RSS.
extension Benchmark {
    func readMemory() throws {
        let strata = try ChildProcess.run("read-memory-strata", [engineStrata, "\(company.count)"])
        let sqlite = try ChildProcess.run("read-memory-sqlite", [engineSQLite, "\(company.count)"])
        for (part, name) in [("w3", "W3 (point lookups)"), ("scan", "a full scan of the employees")] {
            note(
                "memory of \(name): peak RSS Strata +\(strata.shown("\(part)_peak_delta")) B (anonymous \(strata.shown("\(part)_anonymous")) B, file-backed \(strata.shown("\(part)_file")) B), SQLite +\(sqlite.shown("\(part)_peak_delta")) B (anonymous \(sqlite.shown("\(part)_anonymous")) B, file-backed \(sqlite.shown("\(part)_file")) B)"
            )
        }
    }
}

extension Child {
    /// Reports the peak RSS of a part since the last reset, and the anonymous and file-backed RSS after it.
    static func reportReadMemory(_ part: String, before: Int) {
        report("\(part)_peak_delta", max(0, processStatus("VmHWM") - before))
        report("\(part)_anonymous", processStatus("RssAnon"))
        report("\(part)_file", processStatus("RssFile"))
    }

    static func readMemoryStrata(directory: String, count: Int) throws {
        let company = Company(employeeCount: count)
        let rows = company.lookupRows(min(1_000_000, 10 * count), seed: 3)
        let (store, _, table) = try StrataCompany.open(at: directory)
        let snapshot = store.snapshot()
        try resetPeakRSS()
        var before = processStatus("VmRSS")
        var salaries: Int64 = 0
        for row in rows {
            let found: Void? = try snapshot.withRow(RowID(UInt64(row)), in: table) {
                salaries &+= EmployeeRow.salary($0)
            }
            try check(found != nil, "read memory: row \(row) missing")
        }
        reportReadMemory("w3", before: before)
        try resetPeakRSS()
        before = processStatus("VmRSS")
        var scanned = 0
        try snapshot.forEachRow(in: table) { _, bytes in
            salaries &+= EmployeeRow.salary(bytes)
            scanned += 1
            return true
        }
        reportReadMemory("scan", before: before)
        try check(scanned == count && salaries != 0, "read memory: scanned \(scanned) rows")
        try store.close()
    }

    static func readMemorySQLite(path: String, count: Int) throws {
        let company = Company(employeeCount: count)
        let rows = company.lookupRows(min(1_000_000, 10 * count), seed: 3)
        let queue = try SQLiteCompany.open(path)
        try resetPeakRSS()
        var before = processStatus("VmRSS")
        var salaries: Int64 = 0
        try queue.read { db in
            let select = try RawStatement(db, "SELECT salary FROM employee WHERE id = ?")
            for row in rows {
                select.int64(1, row)
                guard try select.step() else { throw BenchmarkFailure("read memory: row \(row) missing") }
                salaries &+= select.columnInt64(0)
                select.reset()
            }
        }
        reportReadMemory("w3", before: before)
        try resetPeakRSS()
        before = processStatus("VmRSS")
        var scanned = 0
        try queue.read { db in
            let select = try RawStatement(db, "SELECT salary FROM employee")
            while try select.step() {
                salaries &+= select.columnInt64(0)
                scanned += 1
            }
        }
        reportReadMemory("scan", before: before)
        try check(scanned == count && salaries != 0, "read memory: scanned \(scanned) rows")
        try queue.close()
    }
}
