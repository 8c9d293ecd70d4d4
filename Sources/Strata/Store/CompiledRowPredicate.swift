import Foundation
import StrataFormat
import StrataQuery

/// A fetch's predicate compiled once over row-record field positions, for the Strata store's scans: a comparison
/// of one stored attribute of the fetched entity with a constant reads that field in the row's bytes where they
/// lie, with no ``StoredObjectView``, key lookup or evaluated value per row; what does not compile (key paths
/// through relationships, `SELF`, `ANY`/`ALL`, subqueries, variables, binary values) is evaluated by the
/// interpreter, on that subtree only.
///
/// Semantics are the interpreter's, not a copy of them: a compiled comparison decodes the field as
/// ``StrataRowReader`` does and calls StrataQuery's own comparison (`PredicateComparison.compare`). Only integer
/// attributes compared with integer constants (`==`, `!=`, `<`, `<=`, `>`, `>=`, `BETWEEN`, `IN`) take a
/// shorter road, reading the integer in place; those comparisons are exact on `Int64` in both. The predicate
/// agreement suite runs every predicate through both.
struct CompiledRowPredicate {
    private indirect enum Node {
        case constant(Bool)
        case and([Node])
        case or([Node])
        case not(Node)
        /// An integer attribute (``RowRecord/Field/int64`` in the row, within the attribute's range) against integer
        /// constants; anything else in the field takes the long road, `fallback`.
        case integer(field: Int, range: ClosedRange<Int64>, test: IntegerTest, fallback: Fallback)
        /// Any other stored attribute against a constant: the field decoded, then StrataQuery's comparison.
        case field(Int, AttributeDescription, PredicateComparison.Operator, QueryValue, ComparisonOptions)
        /// Evaluated by the interpreter on the row's view.
        case interpreted(ObjectPredicate)
    }

    /// An integer comparison decided on the `Int64` in place (a null field takes the long road).
    private enum IntegerTest {
        case equal(Int64)
        case notEqual(Int64)
        case less(Int64)
        case lessOrEqual(Int64)
        case greater(Int64)
        case greaterOrEqual(Int64)
        case between(Int64, Int64)
        case oneOf(Set<Int64>)

        func holds(_ value: Int64) -> Bool {
            switch self {
            case .equal(let constant): value == constant
            case .notEqual(let constant): value != constant
            case .less(let constant): value < constant
            case .lessOrEqual(let constant): value <= constant
            case .greater(let constant): value > constant
            case .greaterOrEqual(let constant): value >= constant
            case .between(let low, let high): value >= low && value <= high
            case .oneOf(let values): values.contains(value)
            }
        }
    }

    /// The long road of an integer comparison, kept out of line.
    private final class Fallback: Sendable {
        let attribute: AttributeDescription
        let comparison: PredicateComparison
        let constant: QueryValue

        init(_ attribute: AttributeDescription, _ comparison: PredicateComparison, _ constant: QueryValue) {
            self.attribute = attribute
            self.comparison = comparison
            self.constant = constant
        }
    }

    /// An integer field that must lie in `low...high` (within the attribute's range `range`): what `==`, `<`, `<=`,
    /// `>`, `>=` and `BETWEEN` with integer constants test. Plain values only, so the scan's hot loop retains
    /// nothing.
    private struct Interval {
        let field: Int
        let range: ClosedRange<Int64>
        let low: Int64
        let high: Int64
    }

    private let root: Node
    /// When the whole predicate is a conjunction of ``Interval``s (W4a's `salary BETWEEN`): those, tested first on
    /// each row; a field they cannot decide in place (a null, a value outside the attribute's range) sends the row
    /// to `root`. Empty otherwise.
    private let intervals: [Interval]
    /// Whether every part compiled: the row's bytes alone decide (a scan filters before it makes anything).
    let isComplete: Bool

    /// Compiles `predicate` for rows of `entity` (and its subentities, which share its attributes' fields).
    init(_ predicate: ObjectPredicate, entity: EntityDescription) {
        root = Self.compile(predicate, entity)
        isComplete = Self.isComplete(root)
        intervals = Self.intervals(root) ?? []
    }

    /// The intervals a node is the conjunction of, or nil when it is something else.
    private static func intervals(_ node: Node) -> [Interval]? {
        switch node {
        case .and(let terms):
            var all: [Interval] = []
            for term in terms {
                guard let more = intervals(term) else { return nil }
                all += more
            }
            return all.isEmpty ? nil : all
        case .integer(let field, let range, let test, _):
            let interval: (Int64, Int64)?
            switch test {
            case .equal(let value): interval = (value, value)
            case .less(let value): interval = value == .min ? nil : (.min, value - 1)
            case .lessOrEqual(let value): interval = (.min, value)
            case .greater(let value): interval = value == .max ? nil : (value + 1, .max)
            case .greaterOrEqual(let value): interval = (value, .max)
            case .between(let low, let high): interval = (low, high)
            case .notEqual, .oneOf: return nil
            }
            // An empty interval (x < Int64.min): no value in place holds it; `low > high` says so.
            let (low, high) = interval ?? (1, 0)
            return [Interval(field: field, range: range, low: low, high: high)]
        default:
            return nil
        }
    }

    /// Whether the row holds the predicate; `interpret` evaluates a part that did not compile.
    ///
    /// - Parameters:
    ///   - bytes: the row.
    ///   - header: its header, decoded.
    ///   - interpret: evaluates a part on the row's view (never called when ``isComplete``).
    ///
    /// Inlined into the scan's row loop, the intervals' test with it; the rest of the predicate is out of line.
    @inline(__always)
    func matches(
        _ bytes: UnsafeRawBufferPointer, header: RowRecord.Header, interpret: (ObjectPredicate) throws -> Bool
    ) throws -> Bool {
        if !intervals.isEmpty, let decided = intervalsDecide(bytes, header: header) { return decided }
        return try Self.evaluate(root, Row(bytes: bytes, header: header), interpret)
    }

    /// Whether the row lies in every interval, or nil when a field cannot be decided in place (the long road
    /// decides, and reports, that row).
    @inline(__always)
    private func intervalsDecide(_ bytes: UnsafeRawBufferPointer, header: RowRecord.Header) -> Bool? {
        for index in intervals.indices {
            let interval = intervals[index]
            guard let number = try? RowRecord.integerField(at: interval.field, in: bytes, header: header),
                interval.range.contains(number)
            else { return nil }
            if number < interval.low || number > interval.high { return false }
        }
        return true
    }

    /// A row and its decoded header.
    private struct Row {
        let bytes: UnsafeRawBufferPointer
        let header: RowRecord.Header
    }

    private static func isComplete(_ node: Node) -> Bool {
        switch node {
        case .constant, .integer, .field: true
        case .and(let terms), .or(let terms): terms.allSatisfy(isComplete)
        case .not(let inner): isComplete(inner)
        case .interpreted: false
        }
    }

    // MARK: - Compiling

    private static func compile(_ predicate: ObjectPredicate, _ entity: EntityDescription) -> Node {
        switch predicate {
        case .constant(let value): .constant(value)
        case .and(let terms): .and(terms.map { compile($0, entity) })
        case .or(let terms): .or(terms.map { compile($0, entity) })
        case .not(let inner): .not(compile(inner, entity))
        case .comparison(let comparison): compile(comparison, entity) ?? .interpreted(predicate)
        }
    }

    /// A comparison of a stored, non-binary attribute of the entity with a constant; nil otherwise.
    private static func compile(_ comparison: PredicateComparison, _ entity: EntityDescription) -> Node? {
        guard comparison.modifier == .direct, case .keyPath(let path, of: .evaluatedObject) = comparison.left,
            path.components.count == 1, case .key(let key) = path.components[0],
            case .constant(let constant) = comparison.right,
            let attribute = entity.attributesByName[key], attribute.storageIndex != nil,
            let field = attribute.fieldIndex
        else { return nil }
        switch attribute.type {
        case .binaryData, .transformable:
            // May be kept outside the row as a blob: the interpreter reads those.
            return nil
        case .integer16, .integer32, .integer64:
            if let test = integerTest(comparison.operator, constant), let range = attribute.type.integerRange {
                return .integer(
                    field: field, range: range, test: test, fallback: Fallback(attribute, comparison, constant))
            }
        default:
            break
        }
        return .field(field, attribute, comparison.operator, constant, comparison.options)
    }

    /// The in-place test of an integer comparison with integer constants (nil when the constant is anything else).
    private static func integerTest(_ op: PredicateComparison.Operator, _ constant: QueryValue) -> IntegerTest? {
        switch (op, constant) {
        case (.equal, .int(let value)): return .equal(value)
        case (.notEqual, .int(let value)): return .notEqual(value)
        case (.lessThan, .int(let value)): return .less(value)
        case (.lessThanOrEqual, .int(let value)): return .lessOrEqual(value)
        case (.greaterThan, .int(let value)): return .greater(value)
        case (.greaterThanOrEqual, .int(let value)): return .greaterOrEqual(value)
        case (.between, .array(let bounds)):
            guard bounds.count == 2, case .int(let low) = bounds[0], case .int(let high) = bounds[1] else { return nil }
            return .between(low, high)
        case (.in, .array(let elements)):
            var values = Set<Int64>()
            for element in elements {
                guard case .int(let value) = element else { return nil }
                values.insert(value)
            }
            return .oneOf(values)
        default:
            return nil
        }
    }

    // MARK: - Evaluating

    @inline(never)
    private static func evaluate(
        _ node: Node, _ row: Row, _ interpret: (ObjectPredicate) throws -> Bool
    ) throws -> Bool {
        switch node {
        case .constant(let value):
            return value
        case .and(let terms):
            for term in terms where !(try evaluate(term, row, interpret)) { return false }
            return true
        case .or(let terms):
            for term in terms where try evaluate(term, row, interpret) { return true }
            return false
        case .not(let inner):
            return !(try evaluate(inner, row, interpret))
        case .integer(let field, let range, let test, let fallback):
            let number: Int64?
            do {
                number = try RowRecord.integerField(at: field, in: row.bytes, header: row.header)
            } catch {
                number = nil  // the long road reports it as the interpreter would
            }
            if let number, range.contains(number) { return test.holds(number) }
            // A null (nil compares as the interpreter says), or a field the decoder refuses: the long road.
            return try compare(
                try decode(field, fallback.attribute, row), fallback.attribute, fallback.comparison.operator,
                fallback.constant, fallback.comparison.options)
        case .field(let field, let attribute, let op, let constant, let options):
            return try compare(try decode(field, attribute, row), attribute, op, constant, options)
        case .interpreted(let predicate):
            return try interpret(predicate)
        }
    }

    /// Field `field` of a row; a row that does not decode fails as the interpreter's read of the key fails.
    private static func decode(
        _ field: Int, _ attribute: AttributeDescription, _ row: Row
    ) throws -> RowRecord.Field {
        do {
            return try RowRecord.field(at: field, in: row.bytes, header: row.header)
        } catch {
            throw PredicateEvaluationError.evaluable(key: attribute.name, underlying: error)
        }
    }

    /// A field as ``StrataRowReader/value(of:in:)`` decodes it, compared as the interpreter compares.
    private static func compare(
        _ field: RowRecord.Field, _ attribute: AttributeDescription, _ op: PredicateComparison.Operator,
        _ constant: QueryValue, _ options: ComparisonOptions
    ) throws -> Bool {
        let value: QueryValue
        do {
            value = try RowCoder.value(from: field, of: attribute)?.queryValue ?? .null
        } catch {
            throw PredicateEvaluationError.evaluable(key: attribute.name, underlying: error)
        }
        return try PredicateComparison.compare(value, op, constant, options: options)
    }
}
