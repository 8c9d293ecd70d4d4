/// How compaction's step 2 knows that the store it copies is whole
/// (``Store/compact(at:configuration:fileSystem:progress:)``, step 0).
enum CompactionVerification {
    /// Step 0 verified the store in full before it was opened; these are the indexes it found whole and in agreement
    /// with their tables, by name (step 2 copies them when nothing changed since, and rebuilds the others).
    case before([String: VerificationReport.IndexSummary])
    /// Step 2 verifies each page as it copies it, with the checks of
    /// ``ReadOnlyStore/verify(checkBlobContents:progress:)`` (one ``StoreVerifier`` walks every tree, lending rows
    /// and entries to the copy), and copies every index, checked against the rows of its table's copy. Any problem, or any damage the copy meets, throws
    /// ``DamageFoundWhileCopying`` before the new page file is swapped in.
    case whileCopying
}

/// What step 2 of a compaction that verifies while it copies throws for a problem: the new files are then removed,
/// nothing else was written, and compaction verifies the store in full to refuse the damage or to copy again,
/// rebuilding what needs it.
struct DamageFoundWhileCopying: Error, CustomStringConvertible {
    let description: String
}
