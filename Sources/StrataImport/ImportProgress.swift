/// How far an import is: its phase and the rows (or links) done in it.
public struct ImportProgress: Sendable, Equatable {
    /// `reading rows`, `linking` or `migrating`.
    public var phase: String
    /// What is done in this phase.
    public var completed: Int
    /// What there is to do in this phase.
    public var total: Int

    /// A progress report.
    public init(phase: String, completed: Int, total: Int) {
        self.phase = phase
        self.completed = completed
        self.total = total
    }
}
