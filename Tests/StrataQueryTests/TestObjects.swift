import StrataQuery

/// An object graph for evaluation tests: people with a to-one manager and to-many reports.
final class Person: PredicateEvaluable {
    let id: Int
    var name: String?
    var age: Int?
    var salary: Double?
    var tags: [String] = []
    var manager: Person?
    var reports: [Person] = []

    init(_ id: Int, name: String?, age: Int? = nil, salary: Double? = nil, tags: [String] = []) {
        self.id = id
        self.name = name
        self.age = age
        self.salary = salary
        self.tags = tags
    }

    func predicateValue(forKey key: String) throws -> EvaluatedValue {
        switch key {
        case "name": .value(name.queryValue)
        case "age": .value(age.queryValue)
        case "salary": .value(salary.queryValue)
        case "tags": .value(tags.queryValue)
        case "manager": manager.map { .object($0) } ?? .value(.null)
        case "reports": .objects(reports)
        case "broken": throw BrokenKey()
        default: throw PredicateEvaluationError.unknownKey(key, in: "Person")
        }
    }

    var predicateIdentity: QueryValue { .identity(ObjectIdentity(id)) }

    /// A team: Ada (manager, 50) with reports Bob (30), Cleo (41, no salary) and Dan (no age).
    static func team() -> Person {
        let ada = Person(1, name: "Ada", age: 50, salary: 9000, tags: ["lead", "ops"])
        let bob = Person(2, name: "Bob", age: 30, salary: 4000, tags: ["dev"])
        let cleo = Person(3, name: "Cléo", age: 41, salary: nil, tags: ["dev", "ops"])
        let dan = Person(4, name: nil, age: nil, salary: 3000)
        for report in [bob, cleo, dan] {
            report.manager = ada
            ada.reports.append(report)
        }
        return ada
    }
}

struct BrokenKey: Error, CustomStringConvertible {
    var description: String { "the row is gone" }
}

/// SplitMix64: a seeded generator, so that a failing property test can be replayed from its printed seed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Parses, failing the test with the error.
func parse(_ format: String, _ arguments: any QueryValueConvertible...) throws -> ObjectPredicate {
    try PredicateParser.parse(format, arguments: arguments.map(\.queryValue))
}

/// Evaluates a format string on a dictionary.
func holds(_ format: String, _ object: [String: QueryValue], _ arguments: any QueryValueConvertible...) throws -> Bool {
    try PredicateParser.parse(format, arguments: arguments.map(\.queryValue)).evaluate(with: object)
}
