/// What ``RelationshipVerifier`` found in a Strata store's relationships: each problem and note with its
/// location (table, row, field), and counts.
///
/// A **problem** is an inconsistency the object graph never leaves: a foreign key naming a row of the wrong
/// entity, a dangling reference the model's delete rules would have prevented, a one-to-one pair that does
/// not point back, a link row naming a missing row or disagreeing with a to-one. A **note** is what the model
/// allows by design: a reference left dangling because the relationship has no inverse, or its inverse's
/// delete rule is "no action" (as in Core Data). Either may carry a ``Remedy``.
///
/// At most ``findingLimit`` problems and as many notes are kept; the counts cover all of them.
///
/// ## Topics
/// - ``Finding``
/// - ``Remedy``
public struct RelationshipReport: Sendable, Equatable, Codable, CustomStringConvertible {
    /// What fixes a finding without losing committed data.
    public enum Remedy: String, Sendable, Equatable, Codable {
        /// Deleting the link row: it names a row that no longer exists, so it carries nothing
        /// (``RelationshipVerifier/removeOrphanLinks(in:)``, `strata fsck --repair`).
        case orphanLinkRemoval
    }

    /// One finding and where it is.
    public struct Finding: Sendable, Equatable, Codable, CustomStringConvertible {
        /// The engine table of the row.
        public var table: String
        /// The row, when the finding is about one.
        public var row: UInt64?
        /// The row-record field, when the finding is about one.
        public var field: Int?
        /// `Entity.relationship`, when the finding is about one.
        public var relationship: String?
        public var message: String
        public var remedy: Remedy?

        public init(
            table: String, row: UInt64? = nil, field: Int? = nil, relationship: String? = nil, message: String,
            remedy: Remedy? = nil
        ) {
            self.table = table
            self.row = row
            self.field = field
            self.relationship = relationship
            self.message = message
            self.remedy = remedy
        }

        /// E.g. `entity.Employee row 3 field 2 (Employee.department): names row 7 of entity.Department, which
        /// does not exist`.
        public var description: String {
            var text = table
            if let row { text += " row \(row)" }
            if let field { text += " field \(field)" }
            if let relationship { text += " (\(relationship))" }
            return text + ": " + message + (remedy.map { " [fixed by \($0.rawValue)]" } ?? "")
        }
    }

    /// How many problems and notes are kept in the lists.
    public static let findingLimit = 1_000

    /// Whether the store records a relationship layout (``RelationshipLayout``); nothing is checked without one.
    public var layoutFound = false
    public var problems: [Finding] = []
    public var notes: [Finding] = []
    /// All problems and notes, also those beyond ``findingLimit``.
    public var problemCount = 0
    public var noteCount = 0
    /// To-one relationships and join tables checked.
    public var toOneRelationships = 0
    public var joinTables = 0
    /// Non-null foreign keys checked, and of those, references left dangling by design.
    public var foreignKeys = 0
    public var danglingByDesign = 0
    /// One-to-one pairs checked.
    public var oneToOnePairs = 0
    /// Link rows checked, and those that name a missing row.
    public var links = 0
    public var orphanLinks = 0
    /// Rows read (entity rows and link rows).
    public var rowsRead = 0

    public init() {}

    /// Whether no problem was found (notes do not count).
    public var isClean: Bool { problemCount == 0 }

    mutating func problem(_ finding: Finding) {
        problemCount += 1
        if problems.count < Self.findingLimit { problems.append(finding) }
    }

    mutating func note(_ finding: Finding) {
        noteCount += 1
        if notes.count < Self.findingLimit { notes.append(finding) }
    }

    /// One line of counts, e.g. `4 to-ones, 1 join table; 1,000 foreign keys (2 dangling by design), ...`.
    public var summary: String {
        guard layoutFound else { return "no relationship layout recorded" }
        return
            "\(toOneRelationships) to-ones, \(joinTables) join tables; \(foreignKeys) foreign keys "
            + "(\(danglingByDesign) dangling by design), \(oneToOnePairs) one-to-one pairs, \(links) links "
            + "(\(orphanLinks) orphaned); \(problemCount) problems, \(noteCount) notes"
    }

    public var description: String {
        var lines = [summary]
        lines += problems.map { "problem: \($0)" }
        if problemCount > problems.count { lines.append("problem: ... and \(problemCount - problems.count) more") }
        lines += notes.map { "note: \($0)" }
        if noteCount > notes.count { lines.append("note: ... and \(noteCount - notes.count) more") }
        return lines.joined(separator: "\n")
    }
}
