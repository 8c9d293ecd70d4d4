import Foundation

/// Hook for the object-graph figures that need predicates in fetch requests: W4a.graph (`salary BETWEEN 100000
/// AND 101800`, no index), W4b.graph (the same with an index on salary) and W5.graph (average salary grouped by
/// department). They are not written yet (fetch requests have had predicates since the fetch pipeline landed;
/// the fetch requests' owner adds these figures here), so this prints them as not measured.
///
/// To add them (the fetch engineer's part): replace the body with one function per figure, each taken with
/// `alternate(repetitions, strata:sqlite:)` on the graph stores (`graphStrata`, `graphSQLite`, built by W1.graph;
/// employee row `i + 1` has `company.salaries[i]`, as W4a.engine checks), with the same self-checks as the
/// engine-level figure (`company.totals(salaries:)`: count, salary sum, per-department averages), GRDB records
/// on the SQLite side, contexts from `GraphModel.context(_:)` (undo off), and `emitFigure("W4a", "graph", ...)`. Keep each figure behind `wants("W4a.graph")` etc.
/// This runs after M1.graph and before W4c.graph and W7.graph, so the graph stores still hold the generated
/// salaries.
extension Benchmark {
    func graphPredicateFigures() throws {
        for (id, unit) in [("W4a", "queries/s"), ("W4b", "queries/s"), ("W5", "s/query")] where wants(id + ".graph") {
            emitUnavailable(id, "graph", unit: unit, because: "not written yet (hook: GraphPredicateFigures.swift)")
        }
    }
}
