import Foundation
import Synchronization
import Testing

@testable import Strata

/// The table that numbers property wrapper keys (names and declaration sites) without `Hasher`.
@Suite struct PropertyKeyIndexTests {
    /// Interns `sources` in order, as ``PropertyKeyTable`` does, and returns the index with the list.
    static func interned(_ sources: [PropertyKeySource]) -> (PropertyKeyIndex, [PropertyKeySource]) {
        var index = PropertyKeyIndex()
        var list: [PropertyKeySource] = []
        for source in sources {
            #expect(index.number(of: source, in: list) == nil)
            list.append(source)
            index.insert(source, number: UInt32(list.count - 1), in: list)
        }
        return (index, list)
    }

    @Test func everyInternedSourceIsFoundAfterTheTableGrows() {
        // 1,000 sources: the table of 64 slots doubles several times.
        let names = (0..<500).map { PropertyKeySource.name("property\($0)") }
        let sites = (0..<500).map {
            PropertyKeySource.site(DeclarationSite(file: 0x1000 + UInt($0 % 7), position: UInt64($0) << 32 | 5))
        }
        var sources: [PropertyKeySource] = []
        for (name, site) in zip(names, sites) { sources += [name, site] }
        let (index, list) = Self.interned(sources)
        for (number, source) in sources.enumerated() {
            #expect(index.number(of: source, in: list) == UInt32(number))
        }
        #expect(index.number(of: .name("property500"), in: list) == nil)
        #expect(index.number(of: .name(""), in: list) == nil)
        #expect(index.number(of: .site(DeclarationSite(file: 0x1000, position: 5)), in: list) == 1)
    }

    /// Names interned lately are found by the bits of the `String` given: the same literal, a copy made at run time
    /// and a string of another storage with the same characters all get one number, small strings and large, and
    /// different names never share one.
    @Test func aNameGetsOneNumberWhateverStringHoldsIt() {
        let table = PropertyKeyTable()
        let long = "aPropertyNameLongerThanFifteenBytes"
        let short = "salary"
        let longKey = table.intern(name: long)
        let shortKey = table.intern(name: short)
        #expect(longKey != shortKey)
        #expect(table.intern(name: long) == longKey)
        #expect(table.intern(name: short) == shortKey)
        // Equal strings of other storage: built at run time, bridged through an array of bytes.
        let builtLong = String(decoding: Array(long.utf8), as: UTF8.self)
        let builtShort = ["sal", "ary"].joined()
        #expect(table.intern(name: builtLong) == longKey)
        #expect(table.intern(name: builtShort) == shortKey)
        #expect(table.intern(.name(long)) == longKey)
        // Many names: slots are shared and replaced, numbers stay right.
        let names = (0..<300).map { "name\($0)" }
        let keys = names.map { table.intern(name: $0) }
        #expect(Set(keys.map(\.number)).count == 300)
        for (name, key) in zip(names, keys) { #expect(table.intern(name: String(name)) == key) }
        #expect(table.intern(name: long) == longKey)
    }

    /// An entity's bindings of property keys: the first key numbers without a lock, the rest under one, each bound
    /// once and then read back as bound.
    @Test func bindingsOfKeysOnEitherSideOfTheDirectSlotsAreEachMadeOnce() {
        let bindings = PropertyBindings()
        let numbers: [UInt32] = [0, 1, 255, 256, 257, 1_000]
        #expect(UInt32(PropertyBindings.directCount) == 256)
        var binds = 0
        for (position, number) in numbers.enumerated() {
            let index = bindings.index(of: PropertyKey(number: number)) {
                binds += 1
                return position * 3
            }
            #expect(index == position * 3)
        }
        #expect(binds == numbers.count)
        for (position, number) in numbers.enumerated() {
            #expect(
                bindings.index(of: PropertyKey(number: number)) { preconditionFailure("bound again") } == position * 3)
        }
        // A key bound to index 0 (the first attribute) reads as bound, not as unbound.
        #expect(bindings.index(of: PropertyKey(number: 0)) { preconditionFailure("bound again") } == 0)
    }

    /// Threads binding one key at once each get its index: they store the same value, and none reads a torn one.
    @Test func aKeyBoundByManyThreadsAtOnceReadsItsIndexEverywhere() {
        let bindings = PropertyBindings()
        let found = Mutex([Int]())
        DispatchQueue.concurrentPerform(iterations: 16) { iteration in
            let number = UInt32(iteration % 2 == 0 ? 7 : 300)
            let index = bindings.index(of: PropertyKey(number: number)) { Int(number) * 2 }
            found.withLock { $0.append(index - Int(number) * 2) }
        }
        #expect(found.withLock { $0 } == Array(repeating: 0, count: 16))
    }
}
