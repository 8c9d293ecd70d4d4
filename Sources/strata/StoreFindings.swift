import Strata
import StrataStorage

/// What one check of a store found, the same for `fsck`, `dump` and (without blob contents) `info`: the
/// engine's report and, for a store of the object graph, its relationships' and its row records' reports.
struct StoreFindings {
    var report: VerificationReport
    /// The relationships' report; nil for a store that is not an object store.
    var relationships: RelationshipReport?
    /// The row records' report (FORMAT.md §6.2); nil for a store that is not an object store.
    var rows: RowRecordReport?
    /// Whether this version may write the store (no unknown read-only-compatible feature bits).
    var isWritable = true

    var isClean: Bool { report.isClean && relationships?.isClean != false && rows?.isClean != false }

    /// Every problem, in all reports.
    var problemCount: Int { report.problems.count + (relationships?.problemCount ?? 0) + (rows?.problemCount ?? 0) }

    /// The first problem, as text (nil when clean).
    var firstProblem: String? {
        report.problems.first?.description ?? relationships?.problems.first?.description
            ?? rows?.problems.first?.description
    }

    /// Opens nothing: checks `store` (opened read-only): the engine's verification, then for an object store
    /// its relationships and every row record, all in the same state.
    static func check(_ store: ReadOnlyStore, blobContents: Bool = true, progress: ProgressHandler?) -> StoreFindings {
        let report = store.verify(checkBlobContents: blobContents, progress: progress)
        let snapshot = store.snapshot()
        let relationships = RelationshipVerifier.verify(snapshot, progress: progress)
        let rows = RowRecordVerifier.verify(snapshot, progress: progress)
        return StoreFindings(report: report, relationships: relationships, rows: rows, isWritable: store.isWritable)
    }
}
