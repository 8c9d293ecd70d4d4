import Foundation
import Testing

@testable import Strata

/// A value read without a lock and changed under one (``ReadMostly``): readers see whole values, changes are never
/// lost, and each change keeps one copy.
@Suite struct ReadMostlyTests {
    @Test func aChangeIsSeenByTheNextReadAndKeepsOneCopy() {
        let table = ReadMostly<[Int32]>([])
        #expect(table.read { $0 } == [])
        let count = table.update { values in
            values.append(4)
            return values.count
        }
        #expect(count == 1)
        #expect(table.read { $0 } == [4])
        table.update { $0[0] = 5 }
        #expect(table.read { $0 } == [5])
        #expect(table.publishedCount == 3)
    }

    /// Four threads read while four others each append their own numbers: every read sees a list that some
    /// sequence of whole changes made (each value once, each thread's in order), and the last holds them all.
    @Test func readersOnOtherThreadsSeeOnlyWholeValuesAndNoChangeIsLost() {
        let table = ReadMostly<[Int]>([])
        let writers = 4
        let perWriter = 200
        let torn = ReadMostly(0)
        DispatchQueue.concurrentPerform(iterations: 2 * writers) { thread in
            if thread < writers {
                for number in 0..<perWriter { table.update { $0.append(thread * perWriter + number) } }
                return
            }
            for _ in 0..<2_000 {
                let consistent = table.read { values in
                    var last = [Int](repeating: -1, count: writers)
                    for value in values {
                        let writer = value / perWriter
                        guard value > last[writer] else { return false }
                        last[writer] = value
                    }
                    return true
                }
                if !consistent { torn.update { $0 += 1 } }
            }
        }
        #expect(torn.read { $0 } == 0)
        #expect(table.read { $0.sorted() } == Array(0..<(writers * perWriter)))
        #expect(table.publishedCount == writers * perWriter + 1)
    }

    /// Registering the class an entity already has changes nothing (``ManagedObject/init(context:)`` registers on
    /// every insert): the entity's binding is made once, not once per registration.
    @Test func registeringTheSameClassAgainKeepsAnEntitysBinding() throws {
        let model = try ManagedObjectModel(entities: [
            Entity("ReadMostlyProbeEntity", className: "ReadMostlyProbeClass") { Attribute("name", .string) }
        ])
        let entity = try #require(model.entity(named: "ReadMostlyProbeEntity"))
        ReadMostlyProbe.register(forEntityName: "ReadMostlyProbeClass")
        #expect(EntityClassRegistry.type(for: entity) == ReadMostlyProbe.self)
        let bindings = entity.classBinding.bindingCount
        for _ in 0..<100 {
            ReadMostlyProbe.register(forEntityName: "ReadMostlyProbeClass")
            #expect(EntityClassRegistry.type(for: entity) == ReadMostlyProbe.self)
        }
        #expect(entity.classBinding.bindingCount == bindings)
    }

    /// The names a property key table knows without a lock fill each slot once: however many names are interned,
    /// at most one copy a slot is kept, and every name keeps its number.
    @Test func knownPropertyNamesKeepAtMostOneCopyASlot() {
        let table = PropertyKeyTable()
        let names = (0..<1_000).map { "known\($0)" }
        let keys = names.map { table.intern(name: $0) }
        for _ in 0..<3 {
            for (name, key) in zip(names, keys) { #expect(table.intern(name: name) == key) }
        }
        #expect(Set(keys.map(\.number)).count == names.count)
        #expect(table.knownNameCopies <= PropertyKeyTable.knownNameSlots + 1)
    }
}

extension ReadMostlyTests {
    /// Names whose bits hash to the same slot each get one: the first ``PropertyKeyTable/knownNameSlots`` names all
    /// become known (one copy published a name, after the first, empty one), and each keeps its number.
    @Test func namesHashedToOneSlotEachBecomeKnown() {
        let table = PropertyKeyTable()
        // Among 64 names, some share a home slot (a full table of 64 random homes without one is all but impossible).
        let names = (0..<PropertyKeyTable.knownNameSlots).map { "colliding\($0)" }
        let keys = names.map { table.intern(name: $0) }
        #expect(table.knownNameCopies == PropertyKeyTable.knownNameSlots + 1)
        for (name, key) in zip(names, keys) { #expect(table.intern(name: name) == key) }
        // Full: a new name is interned under the lock, and keeps its number too.
        let late = table.intern(name: "late name")
        #expect(table.intern(name: "late name") == late && !keys.contains(late))
        #expect(table.knownNameCopies == PropertyKeyTable.knownNameSlots + 1)
    }
}

/// A class registered for ``ReadMostlyTests``' entity only.
private final class ReadMostlyProbe: ManagedObject {}
