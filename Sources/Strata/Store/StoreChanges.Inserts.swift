extension StoreChanges {
    /// The new objects of a save, in insertion order: a collection of ``StoreChanges/Insert``.
    ///
    /// Changes built by hand (an import, a batch insert, a test) keep their entries as they are appended. A
    /// context's save hands its inserted objects instead, and each insert's entry is made from its object when the
    /// store reads it: the store encodes it, writes it into its transaction and drops it, so that a save of a million
    /// objects never holds a million entries besides the objects themselves. Either way a store reads the same
    /// entries; it reads them inside ``PersistentStore/save(_:)``, on the saving thread, and keeps none of them.
    ///
    /// For example:
    ///
    /// ```swift
    /// var changes = StoreChanges()
    /// changes.inserts.append(StoreChanges.Insert(entity: person, values: [.string("Ada")], rowID: nil))
    /// changes.inserts[0].rowID   // nil
    /// ```
    ///
    /// ## Topics
    ///
    /// ### Adding inserts
    ///
    /// - ``init()``
    /// - ``init(arrayLiteral:)``
    /// - ``append(_:)``
    public struct Inserts: RandomAccessCollection, MutableCollection, ExpressibleByArrayLiteral, Sendable {
        /// Where the entries come from.
        private enum Storage {
            /// Entries as they were appended.
            case entries([Insert])
            /// A context's inserted objects, each entry made when it is read.
            case objects(InsertedObjectsSource)
        }

        private var storage: Storage

        /// No inserts.
        public init() { storage = .entries([]) }

        /// The inserts of a literal, in its order.
        public init(arrayLiteral inserts: Insert...) { storage = .entries(inserts) }

        /// The inserts of a context's save: an entry for each object, made when a store reads it.
        init(_ source: InsertedObjectsSource) { storage = .objects(source) }

        /// The position of the first insert: 0.
        public var startIndex: Int { 0 }

        /// The number of inserts.
        public var endIndex: Int {
            switch storage {
            case .entries(let entries): entries.count
            case .objects(let source): source.objects.count
            }
        }

        /// The insert at `position`. Setting one keeps every insert as an entry from then on.
        public subscript(position: Int) -> Insert {
            get {
                switch storage {
                case .entries(let entries): entries[position]
                case .objects(let source): source.insert(at: position)
                }
            }
            set {
                var entries = takeEntries()
                entries[position] = newValue
                storage = .entries(entries)
            }
        }

        /// Adds an insert at the end. The inserts are kept as entries from then on.
        ///
        /// - Parameter insert: the new object's insert.
        public mutating func append(_ insert: Insert) {
            var entries = takeEntries()
            entries.append(insert)
            storage = .entries(entries)
        }

        /// The entries, made from the objects if they came from a context; the storage is left empty so that
        /// the array is changed in place.
        private mutating func takeEntries() -> [Insert] {
            let entries: [Insert]
            switch storage {
            case .entries(let kept): entries = kept
            case .objects(let source): entries = (0..<source.objects.count).map(source.insert(at:))
            }
            storage = .entries([])
            return entries
        }

        /// The concrete entity of the insert at `position`, without making its entry.
        package func entity(at position: Int) -> EntityDescription {
            switch storage {
            case .entries(let entries): entries[position].entity
            case .objects(let source): source.objects[position].entity
            }
        }

        /// The row ID obtained earlier of the insert at `position`, without making its entry.
        package func rowID(at position: Int) -> UInt64? {
            switch storage {
            case .entries(let entries): entries[position].rowID
            case .objects(let source): source.objects[position].objectID.rowID
            }
        }

        /// Whether the inserts come from a context's objects, which take the row records a store writes for them
        /// (``written(_:at:)``): a store that keeps rows as records makes them for no one else.
        package var takesWrittenRows: Bool {
            if case .objects = storage { return true }
            return false
        }

        /// Hands `row`, the row record the store wrote for the insert at `position` (checked as a fetch checks a row,
        /// at the insert's version, no value kept outside it), to its object if the inserts come from a context: the
        /// object holds the row in place of its values from then on (``ObjectState/holdWritten(_:of:)``), the bytes
        /// the store encoded serving as both. The saving context completes the object's settling onto it when the
        /// store returns, or gives the object its values back when the store throws. Entries appended by hand take
        /// nothing.
        package func written(_ row: StoredRow, at position: Int) {
            guard case .objects(let source) = storage else { return }
            source.objects[position].madeState.holdWritten(row, of: row.entity)
        }

        /// Whether the insert at `position` names an object inserted in the same save, without making its entry.
        package func namesInserts(at position: Int) -> Bool {
            let references =
                switch storage {
                case .entries(let entries): entries[position].references
                case .objects(let source): source.references[position]
                }
            return references.contains { if case .inserted = $0 { true } else { false } }
        }
    }
}

/// A context's inserted objects as the inserts of its save (``StoreChanges/Inserts``): each object with the to-ones
/// the save resolved for it; each insert's entry is made from them when a store reads it.
struct InsertedObjectsSource: @unchecked Sendable {
    // Safety: a store reads the inserts inside `save(_:)`, which the saving context calls on its own thread and
    // waits for, and hands the objects their written rows there (`written(_:at:)`); nothing reads them after it
    // returns (the context drops them), and no store keeps them.
    /// The inserted objects, in insertion order.
    let objects: [ManagedObject]
    /// Each object's to-ones, by ``RelationshipDescription/toOneIndex``.
    let references: [[ObjectReference?]]

    /// The insert of the object at `position`: its values as they are now, and its row ID obtained earlier.
    func insert(at position: Int) -> StoreChanges.Insert {
        let object = objects[position]
        return StoreChanges.Insert(
            entity: object.entity, values: object.persistentValues, rowID: object.objectID.rowID,
            references: references[position])
    }
}
