import Testing

@testable import StrataFormat

/// Packed leaf values against an array of values: every change keeps them equal, value by value and in cell sizes.
@Suite struct LeafValuesTests {
    private struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        mutating func value() -> LeafValue {
            if next(6) == 0 { return .overflow(firstPage: UInt64(next(1_000) + 1), length: 600 + next(5_000)) }
            let length = next(4) == 0 ? 300 + next(400) : next(40)
            let fill = UInt8(next(256))
            return .bytes((0..<length).map { fill &+ UInt8(truncatingIfNeeded: $0) })
        }
    }

    private func expectSame(_ packed: LeafValues, _ model: [LeafValue]) {
        #expect(packed.count == model.count)
        #expect(Array(packed) == model)
        for index in model.indices {
            #expect(packed.cellSize(index, maximumInline: 256) == model[index].cellSize(maximumInline: 256))
            #expect(packed.length(index) == model[index].length)
            packed.withCell(index) { cell in #expect(LeafValue(cell) == model[index]) }
        }
        for limit in [0, 39, 256, 700] {
            let hasLong = model.contains { value in
                guard case .bytes(let bytes) = value else { return false }
                return bytes.count > limit
            }
            #expect(packed.hasInlineValue(longerThan: limit) == hasLong, "limit \(limit)")
        }
    }

    @Test(arguments: [1, 2, 3, 4]) func randomChangesMatchAnArray(seed: UInt64) {
        var random = Generator(state: seed)
        var packed = LeafValues()
        var model: [LeafValue] = []
        for _ in 0..<400 {
            switch random.next(9) {
            case 0, 1:
                let value = random.value()
                packed.append(value)
                model.append(value)
            case 2, 3:
                let index = random.next(model.count + 1)
                let value = random.value()
                packed.insert(value, at: index)
                model.insert(value, at: index)
            case 4 where !model.isEmpty:
                let index = random.next(model.count)
                let value = random.value()
                packed.replace(index, with: value)
                model[index] = value
            case 5 where !model.isEmpty:
                let index = random.next(model.count)
                packed.remove(at: index)
                model.remove(at: index)
            case 6:
                let cut = random.next(model.count + 1)
                let tail = packed.extracting(cut..<packed.count)
                #expect(Array(tail) == Array(model[cut...]))
                packed.removeSuffix(from: cut)
                #expect(Array(packed) == Array(model[..<cut]))
                packed.append(contentsOf: tail)
            case 7:
                let cut = random.next(model.count + 1)
                let head = packed.extracting(0..<cut)
                packed.removePrefix(cut)
                #expect(Array(packed) == Array(model[cut...]))
                packed.prepend(contentsOf: head)
            default:
                #expect(
                    packed.cellBytes(0..<model.count, maximumInline: 256)
                        == model.reduce(0) { $0 + $1.cellSize(maximumInline: 256) })
            }
            #expect(Array(packed) == model)
        }
        expectSame(packed, model)
        #expect(packed == LeafValues(model))
    }

    /// A leaf used as a queue (rows removed at the front, added at the end) keeps its buffer within twice its values:
    /// removals at the front leave unused bytes there, and those never outgrow the values.
    @Test func removalsAtTheFrontLeaveBoundedUnusedBytes() {
        var packed = LeafValues()
        var model: [LeafValue] = []
        for step in 0..<2_000 {
            let value = LeafValue.bytes(Array(repeating: UInt8(truncatingIfNeeded: step), count: 10 + step % 30))
            packed.append(value)
            model.append(value)
            if model.count > 8 {
                packed.remove(at: 0)
                model.removeFirst()
            }
            let live = model.reduce(0) { $0 + $1.length }
            guard packed.storedByteCount <= 2 * live else {
                Issue.record("step \(step): \(packed.storedByteCount) bytes held for \(live) bytes of values")
                return
            }
        }
        expectSame(packed, model)
        #expect(packed == LeafValues(model))
    }

    @Test func emptyValuesAndEmptyRanges() {
        var packed: LeafValues = [.bytes([]), .bytes([1, 2]), .bytes([])]
        #expect(packed.length(0) == 0)
        #expect(packed.extracting(1..<1).isEmpty)
        packed.remove(at: 1)
        expectSame(packed, [.bytes([]), .bytes([])])
        [UInt8]([5, 6, 7]).withUnsafeBytes { packed.append(inline: $0) }
        expectSame(packed, [.bytes([]), .bytes([]), .bytes([5, 6, 7])])
        packed.removeAll()
        #expect(packed.isEmpty)
        packed.removePrefix(0)
        packed.removeSuffix(from: 0)
        #expect(packed.isEmpty)
    }
}

extension LeafValuesTests {
    private struct Thrown: Error {}

    /// An overflow reference is not an inline value, however long the value it names.
    @Test func longInlineValuesAreFoundAndOverflowReferencesAreNot() {
        let packed: LeafValues = [.bytes([1, 2, 3]), .overflow(firstPage: 4, length: 900), .bytes([])]
        #expect(packed.hasInlineValue(longerThan: 2))
        #expect(!packed.hasInlineValue(longerThan: 3))
        #expect(!LeafValues().hasInlineValue(longerThan: 0))
    }

    @Test func aThrowingBodyPropagates() {
        let packed: LeafValues = [.bytes([1, 2]), .overflow(firstPage: 4, length: 900)]
        #expect(throws: Thrown.self) { try packed.withCell(0) { _ in throw Thrown() } }
        #expect(throws: Thrown.self) { try packed.withCell(1) { _ -> Bool in throw Thrown() } }
    }
}
