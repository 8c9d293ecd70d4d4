import StrataFormat

/// Index reads shared by snapshots and write transactions.
enum IndexScan {
    static func checkBound(_ bound: IndexBound?, _ index: IndexState) throws {
        guard let bound, bound.key.count > index.definition.fields.count else { return }
        throw StorageError.invalidArgument(
            "a bound of \(bound.key.count) parts on index '\(index.definition.name)' of \(index.definition.fields.count) fields"
        )
    }

    static func forEach(
        _ state: StoreState, pages: PageStore, index id: IndexID, lower: IndexBound?, upper: IndexBound?, reverse: Bool,
        _ body: (IndexEntry) throws -> Bool
    ) throws {
        try forEachView(state, pages: pages, index: id, lower: lower, upper: upper, reverse: reverse) { entry in
            try body(try entry.decoded())
        }
    }

    /// The one index range walk: entries lent where they lie.
    static func forEachView(
        _ state: StoreState, pages: PageStore, index id: IndexID, lower: IndexBound?, upper: IndexBound?, reverse: Bool,
        _ body: (IndexEntryView) throws -> Bool
    ) throws {
        let index = try state.index(id)
        try checkBound(lower, index)
        try checkBound(upper, index)
        try IndexTree(pages: pages).forEach(
            index.root, from: lower?.lowerEntryBound, below: upper?.upperEntryBound, reverse: reverse
        ) { entry in
            try body(IndexEntryView(entry, indexName: index.definition.name, file: pages.fileName))
        }
    }

    static func rowIDs(
        _ state: StoreState, pages: PageStore, index id: IndexID, matching key: [RowRecord.Field]
    ) throws
        -> [RowID]
    {
        let index = try state.index(id)
        guard key.count <= index.definition.fields.count else {
            throw StorageError.invalidArgument(
                "a key of \(key.count) parts on index '\(index.definition.name)' of \(index.definition.fields.count) fields"
            )
        }
        let prefix = IndexKey.encodePrefix(key)
        var rows: [RowID] = []
        try IndexTree(pages: pages).forEach(
            index.root, from: prefix.isEmpty ? nil : prefix, below: IndexKey.prefixSuccessor(prefix), reverse: false
        ) { entry in
            rows.append(RowID(IndexKey.rowID(ofEntry: entry)))
            return true
        }
        return rows
    }

    static func names(_ state: StoreState, on table: TableID) -> [String] {
        (state.tables[table]?.indexes ?? []).compactMap { state.indexes[$0.id]?.definition.name }.sorted()
    }
}
