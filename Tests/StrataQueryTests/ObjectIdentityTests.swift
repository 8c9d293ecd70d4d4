import StrataQuery
import Testing

/// ``ObjectIdentity``: equal when it wraps equal values of the same type, with equal hashes then.
@Suite struct ObjectIdentityTests {
    struct Key: Hashable, Sendable {
        let table: String
        let row: Int64
    }

    @Test func equalValuesOfOneTypeAreOneIdentity() {
        let a = ObjectIdentity(Key(table: "Employee", row: 7))
        let b = ObjectIdentity(Key(table: "Employee", row: 7))
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(Set([a, b, ObjectIdentity(Key(table: "Employee", row: 8))]).count == 2)
        var groups: [QueryValue: Int] = [:]
        for row in [7, 8, 7, 7] as [Int64] {
            groups[.identity(ObjectIdentity(Key(table: "Employee", row: row))), default: 0] += 1
        }
        #expect(groups[.identity(a)] == 3)
    }

    @Test func valuesOfOtherTypesAreOtherIdentities() {
        #expect(ObjectIdentity(1) != ObjectIdentity("1"))
        #expect(ObjectIdentity(1 as Int) != ObjectIdentity(1 as Int64))
        #expect(ObjectIdentity(Key(table: "A", row: 1)) != ObjectIdentity(1 as Int64))
    }
}
