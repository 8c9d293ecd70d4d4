/// How far a long operation (verification, compaction, salvage) has got, reported to a caller's closure
/// now and then so that a tool can draw a progress bar.
///
/// `completed` and `total` count the operation's own units (rows, pages, blob chunks): only their ratio
/// means anything. `total` may be 0 when the amount of work is unknown.
public struct OperationProgress: Sendable, Equatable {
    /// What the operation is doing now, e.g. `"checking tables"`.
    public var phase: String
    public var completed: UInt64
    public var total: UInt64

    public init(phase: String, completed: UInt64, total: UInt64) {
        self.phase = phase
        self.completed = completed
        self.total = total
    }

    /// `completed / total`, between 0 and 1 (0 when the total is unknown).
    public var fraction: Double {
        total == 0 ? 0 : min(1, Double(completed) / Double(total))
    }
}

/// The closure long operations report their ``OperationProgress`` to.
public typealias ProgressHandler = (OperationProgress) -> Void

/// Calls a progress handler at most every `interval` units, and always for the last one.
struct ProgressThrottle {
    let handler: ProgressHandler?
    let phase: String
    let total: UInt64
    private(set) var completed: UInt64 = 0
    private var reported: UInt64 = 0
    private let interval: UInt64

    init(_ handler: ProgressHandler?, phase: String, total: UInt64) {
        self.handler = handler
        self.phase = phase
        self.total = total
        self.interval = max(1, total / 200)
        handler?(OperationProgress(phase: phase, completed: 0, total: total))
    }

    mutating func advance(by units: UInt64 = 1) {
        completed += units
        guard let handler, completed - reported >= interval || completed >= total else { return }
        reported = completed
        handler(OperationProgress(phase: phase, completed: completed, total: total))
    }
}
