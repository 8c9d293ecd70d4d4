import StrataWorkload
import Testing

// Expected values were computed once with an independent Python implementation of WORKLOAD.md's generator
// (plain integers masked to 64 bits, Python floats for unit()), not with this library. Seed 0's first output,
// 0xE220A8397B1DCDAF, is also the published SplitMix64 reference value.
@Suite struct SplitMix64Tests {
    @Test func firstOutputsOfSeed42MatchTheReference() {
        var generator = SplitMix64(seed: 42)
        let outputs = (0..<5).map { _ in generator.next() }
        #expect(
            outputs == [
                0xBDD7_3226_2FEB_6E95, 0x28EF_E333_B266_F103, 0x4752_6757_130F_9F52, 0x581C_E1FF_0E4A_E394,
                0x09BC_585A_2448_23F2,
            ]
        )
    }

    @Test func firstOutputsOfSeed0MatchThePublishedReference() {
        var generator = SplitMix64(seed: 0)
        #expect(generator.next() == 0xE220_A839_7B1D_CDAF)
        #expect(generator.next() == 0x6E78_9E6A_A1B9_65F4)
        #expect(generator.next() == 0x06C4_5D18_8009_454F)
    }

    @Test func uniformAndUnitConsumeOneOutputEach() {
        var generator = SplitMix64(seed: 42)
        #expect(generator.uniform(12, 20) == 13)  // 12 + 0xBDD732262FEB6E95 % 9
        #expect(generator.unit() == 0.1599103928769201)  // Double(0x28EFE333B266F103 >> 11) * 2^-53
        var reference = SplitMix64(seed: 42)
        _ = reference.next()
        _ = reference.next()
        #expect(generator == reference)
    }

    @Test func uniformStaysInItsClosedRange() {
        var generator = SplitMix64(seed: 7)
        for _ in 0..<10_000 {
            #expect((30_000...200_000).contains(generator.uniform(30_000, 200_000)))
        }
        var seen = Set<UInt64>()
        for _ in 0..<1_000 { seen.insert(generator.uniform(0, 3)) }
        #expect(seen == [0, 1, 2, 3])
        #expect(generator.uniform(5, 5) == 5)
    }

    @Test func uniformOverTheWholeRangeIsNext() {
        var generator = SplitMix64(seed: 42)
        #expect(generator.uniform(0, .max) == 0xBDD7_3226_2FEB_6E95)
    }

    @Test func unitStaysInTheHalfOpenUnitInterval() {
        var generator = SplitMix64(seed: 9)
        for _ in 0..<10_000 {
            let x = generator.unit()
            #expect(x >= 0 && x < 1)
        }
    }

    @Test func copiesReplayTheSameSequence() {
        var original = SplitMix64(seed: 123)
        _ = original.next()
        var copy = original
        #expect((0..<100).map { _ in original.next() } == (0..<100).map { _ in copy.next() })
    }

    @Test func worksWithTheStandardLibraryRandomAPIs() {
        var a = SplitMix64(seed: 5)
        var b = SplitMix64(seed: 5)
        #expect(Int.random(in: 0..<1_000, using: &a) == Int.random(in: 0..<1_000, using: &b))
        #expect([1, 2, 3, 4, 5].shuffled(using: &a) == [1, 2, 3, 4, 5].shuffled(using: &b))
    }

    @Test func namesAreTwelveToTwentyLettersWithAnUpperCaseFirst() {
        var generator = SplitMix64(seed: 99)
        var lengths = Set<Int>()
        for _ in 0..<5_000 {
            let name = Array(generator.makeName().utf8)
            lengths.insert(name.count)
            #expect((12...20).contains(name.count))
            #expect((UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(name[0]))
            #expect(name.dropFirst().allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) })
        }
        #expect(lengths == Set(12...20))
    }

    @Test func makeNameConsumesOneOutputPerLetterPlusTheLength() {
        var generator = SplitMix64(seed: 42)
        let name = generator.makeName()
        #expect(name == "Bkquuxmrgvcyv")
        var reference = SplitMix64(seed: 42)
        for _ in 0..<(1 + name.utf8.count) { _ = reference.next() }
        #expect(generator == reference)
    }
}
