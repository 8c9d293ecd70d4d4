/// The row IDs of a save's inserts, in the order of ``StoreChanges/inserts``, kept as runs of consecutive IDs.
///
/// A store gives the inserts of one table consecutive row IDs, so a save of a million objects of a few entities is a
/// few runs (16 bytes each), not an array of a million IDs: the store plans them, writes with them and returns them
/// in this form, and the saving context reads each object's ID from it. It reads as an array of row IDs.
///
/// For example:
///
/// ```swift
/// var rowIDs: InsertedRowIDs = [7, 8, 9]
/// rowIDs.append(3)
/// rowIDs[3]   // 3
/// Array(rowIDs)   // [7, 8, 9, 3]
/// ```
///
/// ## Topics
///
/// ### Making a list
///
/// - ``init()``
/// - ``init(_:)``
/// - ``append(_:)``
public struct InsertedRowIDs: RandomAccessCollection, ExpressibleByArrayLiteral, Equatable, Sendable {
    /// A run of consecutive row IDs: the position of its first insert, and that insert's row ID.
    private struct Run: Equatable {
        var start: Int
        var firstRowID: UInt64
    }

    /// The runs, by increasing `start`; the first starts at 0.
    private var runs: [Run] = []
    /// How many row IDs there are.
    public private(set) var endIndex = 0

    /// An empty list.
    public init() {}

    /// The row IDs of a sequence, in its order.
    ///
    /// - Parameter rowIDs: a row ID for each insert, in insertion order.
    public init(_ rowIDs: some Sequence<UInt64>) {
        for rowID in rowIDs { append(rowID) }
    }

    /// The row IDs of a literal, in its order.
    public init(arrayLiteral rowIDs: UInt64...) { self.init(rowIDs) }

    /// The position of the first row ID: 0.
    public var startIndex: Int { 0 }

    /// The row ID of the insert at `position`.
    public subscript(position: Int) -> UInt64 {
        precondition(position >= 0 && position < endIndex, "an inserted row ID's position out of range")
        // The last run whose start is at or before `position` (a save's inserts are a few runs).
        var low = 0
        var high = runs.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if runs[middle].start <= position { low = middle } else { high = middle - 1 }
        }
        let run = runs[low]
        return run.firstRowID + UInt64(position - run.start)
    }

    /// Adds the row ID of the next insert.
    ///
    /// - Parameter rowID: its row ID.
    public mutating func append(_ rowID: UInt64) {
        if let last = runs.last, rowID > last.firstRowID,
            rowID - last.firstRowID == UInt64(endIndex - last.start)
        {
            endIndex += 1
            return
        }
        runs.append(Run(start: endIndex, firstRowID: rowID))
        endIndex += 1
    }

    /// Two lists are equal when they hold the same row IDs in the same order.
    public static func == (lhs: InsertedRowIDs, rhs: InsertedRowIDs) -> Bool {
        // Runs are made the same way from the same IDs: equal IDs have equal runs.
        lhs.endIndex == rhs.endIndex && lhs.runs == rhs.runs
    }
}
