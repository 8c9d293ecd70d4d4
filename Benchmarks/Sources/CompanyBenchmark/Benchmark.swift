import Foundation
import GRDB
import StrataStorage

/// One run of the company workload at a given N: every figure, in WORKLOAD.md's order where the stores allow.
final class Benchmark {
    let company: Company
    let scratch: String
    let repetitions: Int
    let only: Set<String>?
    /// W3's lookups: 1,000,000, or 10 per employee when N is below 100,000.
    let lookupCount: Int
    /// Figures printed at the end (M1 comes last in WORKLOAD.md but is measured with W1 and the graph).
    var deferredFigures: [() -> Void] = []
    /// The employees' salaries in the engine stores (after W7's updates once it has run), which W8 and W12
    /// check; and in the graph stores (after W7.graph), which W8.graph checks.
    var engineSalaries: [Int64]
    var graphSalaries: [Int64]

    init(employeeCount: Int, scratch: String, repetitions: Int, only: Set<String>?) {
        self.scratch = scratch
        self.repetitions = repetitions
        self.only = only
        let start = now()
        company = Company(employeeCount: employeeCount)
        lookupCount = min(1_000_000, 10 * employeeCount)
        engineSalaries = company.salaries
        graphSalaries = company.salaries
        note("generated 100 departments + \(grouped(employeeCount)) employees in \(format(now() - start)) s")
    }

    /// Whether a figure was asked for (`--only W1,W3` runs those; the N-row stores are built whatever is asked).
    func wants(_ id: String) -> Bool { only.map { $0.contains(id) } ?? true }

    func run() throws {
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let started = now()
        func step(_ id: String, _ body: () throws -> Void) throws {
            guard wants(id) else { return }
            let start = now()
            try body()
            note("\(id) took \(format(now() - start)) s")
        }

        // Engine level. W1 builds the N-row stores that W3, W4a, W5, W7, W9 and W11 read.
        try bulkInsert()
        try step("W2") { try durableCommits() }
        try step("W2c") { try concurrentCommits() }
        try step("W2p") { try multiProcessCommits() }
        if ["W3", "W4a", "W4b", "W4c", "W5"].contains(where: wants) {
            let (store, departments, table) = try StrataCompany.open(at: engineStrata)
            let queue = try SQLiteCompany.open(engineSQLite)
            try step("W3") { try pointLookups(store, table, queue) }
            try step("W4a") { try predicateScan(store, table, queue) }
            try step("W4b") { try indexedPredicate(store, table, queue) }
            try step("W4c") { try relationshipQueries(store, departments, table, queue) }
            try step("W5") { try aggregate(store, table, queue) }
            try store.close()
            try queue.close()
            if wants("W3") { try readMemory() }
        }
        try step("W3w") { try readerBesideWriter() }
        try step("W6") { try blobs() }
        try step("W7") { try updates() }
        try step("W8") { try cascadeDelete() }
        try step("W9") { try reopen() }
        try step("W10") { try recovery() }
        try step("W11") { try verification() }
        try step("W12") { try compaction() }

        // Object-graph level. W1.graph builds the graph stores that the other graph figures use.
        try step("W1.graph") { try graphBulkInsert() }
        let graphFigures = [
            "W3.graph", "M1.graph", "W4a.graph", "W4b.graph", "W5.graph", "W4c.graph", "W7.graph", "W8.graph",
        ]
        if !wants("W1.graph") && graphFigures.contains(where: wants) {
            // The graph stores are needed anyway: build them once, unprinted.
            _ = try ChildProcess.run("w1-graph-strata", [graphStrata, "\(company.count)"])
            try FileManager.default.createDirectory(
                atPath: (graphSQLite as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            _ = try ChildProcess.run("w1-graph-sqlite", [graphSQLite, "\(company.count)"])
        }
        try step("W3.graph") { try graphLookups() }
        try step("M1.graph") { try graphMemory() }
        // W4a.graph, W4b.graph and W5.graph need predicates in fetch requests: GraphPredicateFigures.swift.
        try graphPredicateFigures()
        try step("W4c.graph") { try graphRelationship() }
        try step("W7.graph") { try graphUpdates() }
        try step("W8.graph") { try graphCascadeDelete() }
        try step("M2.graph") { try graphMigration() }
        // The graph figures again with the PostgreSQL store (GraphPostgresFigures.swift), when built with the
        // package trait Postgres.
        #if Postgres
        try graphPostgresFigures()
        #endif

        for figure in deferredFigures { figure() }
        note("all figures checked; total \(format(now() - started)) s")
    }
}
