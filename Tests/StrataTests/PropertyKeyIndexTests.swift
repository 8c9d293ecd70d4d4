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
}
