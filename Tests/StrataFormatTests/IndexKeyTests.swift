import StrataFormat
import StrataTestSupport
import Testing

/// The order-preserving index key encoding: bytewise order of encodings is value order, round trips, and
/// decoding untrusted bytes.
@Suite struct IndexKeyTests {
    typealias Field = RowRecord.Field

    // MARK: - A reference order, written from the values (not from the encoding)

    /// -1, 0 or 1 as `a` sorts before, with or after `b` in value order (types by tag first).
    static func referenceCompare(_ a: Field, _ b: Field) -> Int {
        if a.tag != b.tag { return a.tag.rawValue < b.tag.rawValue ? -1 : 1 }
        func order<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : (x == y ? 0 : 1) }
        func floating(_ x: Double, _ y: Double) -> Int {
            switch (x.isNaN, y.isNaN) {
            case (true, true): return 0
            case (true, false): return 1
            case (false, true): return -1
            case (false, false): return order(x, y)  // -0.0 == 0.0
            }
        }
        func bytes(_ x: [UInt8], _ y: [UInt8]) -> Int {
            x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
        }
        switch (a, b) {
        case (.null, .null): return 0
        case (.int64(let x), .int64(let y)): return order(x, y)
        case (.double(let x), .double(let y)), (.date(let x), .date(let y)): return floating(x, y)
        case (.float(let x), .float(let y)): return floating(Double(x), Double(y))
        case (.boolean(let x), .boolean(let y)): return order(x ? 1 : 0, y ? 1 : 0)
        case (.string(let x), .string(let y)), (.uri(let x), .uri(let y)): return bytes(Array(x.utf8), Array(y.utf8))
        case (.bytes(let x), .bytes(let y)): return bytes(x, y)
        case (.uuid(let x), .uuid(let y)): return order(x, y)
        case (.decimal(let x), .decimal(let y)): return decimalCompare(x, y)
        case (.blobReference(let x), .blobReference(let y)), (.reference(let x), .reference(let y)): return order(x, y)
        default: fatalError("same tags")
        }
    }

    /// Decimals compared through their decimal digit strings (`String(UInt128)`): NaN last.
    static func decimalCompare(_ x: RowRecord.DecimalBits, _ y: RowRecord.DecimalBits) -> Int {
        if x.isNaN || y.isNaN { return x.isNaN == y.isNaN ? 0 : (x.isNaN ? 1 : -1) }
        func parts(_ d: RowRecord.DecimalBits) -> (sign: Int, digits: String, magnitude: Int) {
            var mantissa: UInt128 = 0
            for word in d.mantissa.reversed() { mantissa = mantissa << 16 | UInt128(word) }
            if mantissa == 0 { return (0, "", 0) }
            var digits = String(mantissa)
            var exponent = Int(d.exponent)
            while digits.hasSuffix("0") {
                digits.removeLast()
                exponent += 1
            }
            return (d.isNegative ? -1 : 1, digits, exponent + digits.count)
        }
        let p = parts(x)
        let q = parts(y)
        if p.sign != q.sign { return p.sign < q.sign ? -1 : 1 }
        if p.sign == 0 { return 0 }
        var magnitude: Int
        if p.magnitude != q.magnitude {
            magnitude = p.magnitude < q.magnitude ? -1 : 1
        } else if p.digits == q.digits {
            magnitude = 0
        } else {
            let length = max(p.digits.count, q.digits.count)
            let a = p.digits.padding(toLength: length, withPad: "0", startingAt: 0)
            let b = q.digits.padding(toLength: length, withPad: "0", startingAt: 0)
            magnitude = a < b ? -1 : (a == b ? 0 : 1)
        }
        return p.sign * magnitude
    }

    static func referenceCompare(_ a: [Field], _ b: [Field]) -> Int {
        for (x, y) in zip(a, b) {
            let order = referenceCompare(x, y)
            if order != 0 { return order }
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    // MARK: - Random values

    static func randomField(_ tag: RowRecord.Tag, _ random: inout RepeatableRandomNumberGenerator) -> Field {
        let specialDoubles: [Double] = [
            0, -0.0, 1, -1, .infinity, -.infinity, .nan, -Double.nan, .leastNonzeroMagnitude,
            -.leastNonzeroMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 0.5, -0.5,
        ]
        func double() -> Double {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: return specialDoubles.randomElement(using: &random)!
            case 1: return Double(Int.random(in: -5...5, using: &random))
            case 2: return Double.random(in: -1e6...1e6, using: &random)
            default: return Double(bitPattern: random.next())
            }
        }
        func bytes() -> [UInt8] {
            let alphabet: [UInt8] = [0, 1, 0x7F, 0xFE, 0xFF, 0x61, 0x62]
            return (0..<Int.random(in: 0...6, using: &random)).map { _ in
                Bool.random(using: &random)
                    ? alphabet.randomElement(using: &random)! : UInt8.random(in: 0...255, using: &random)
            }
        }
        func string() -> String {
            let pieces = ["", "a", "b", "ab", "\u{0}", "é", "z\u{0}z", "日本", "🙂", "A", "aa"]
            return (0..<Int.random(in: 0...3, using: &random)).map { _ in pieces.randomElement(using: &random)! }
                .joined()
        }
        switch tag {
        case .null: return .null
        case .int64:
            let edges: [Int64] = [.min, .min + 1, -1, 0, 1, .max - 1, .max]
            return .int64(
                Bool.random(using: &random)
                    ? edges.randomElement(using: &random)!
                    : Int64(bitPattern: random.next()) >> Int64.random(in: 0...63, using: &random))
        case .double: return .double(double())
        case .float: return .float(Float(double()))
        case .boolean: return .boolean(Bool.random(using: &random))
        case .string: return .string(string())
        case .bytes: return .bytes(bytes())
        case .date: return .date(secondsSinceReferenceDate: double())
        case .uuid:
            return .uuid(
                Bool.random(using: &random)
                    ? UInt128(UInt8.random(in: 0...3, using: &random)) << 120
                    : UInt128(random.next()) << 64 | UInt128(random.next()))
        case .decimal:
            if Int.random(in: 0..<10, using: &random) == 0 {
                return .decimal(.init(exponent: 0, isNegative: true, isCompact: false, mantissa: []))  // NaN
            }
            var words = (0..<Int.random(in: 0...8, using: &random)).map { _ in
                Bool.random(using: &random)
                    ? UInt16.random(in: 0...20, using: &random) : UInt16.random(in: 0...UInt16.max, using: &random)
            }
            while words.last == 0 { words.removeLast() }
            let exponent =
                Bool.random(using: &random)
                ? Int8.random(in: -3...3, using: &random) : Int8.random(in: .min ... .max, using: &random)
            return .decimal(
                .init(
                    exponent: exponent, isNegative: !words.isEmpty && Bool.random(using: &random), isCompact: false,
                    mantissa: words))
        case .uri: return .uri("https://x/" + string())
        case .blobReference: return .blobReference(random.next() >> UInt64.random(in: 0...63, using: &random))
        case .reference: return .reference(random.next() >> UInt64.random(in: 0...63, using: &random))
        }
    }

    static func sign(_ value: Int) -> Int { value < 0 ? -1 : (value > 0 ? 1 : 0) }

    // MARK: - Tests

    @Test(arguments: RowRecord.Tag.allCases)
    func bytewiseOrderIsValueOrder(tag: RowRecord.Tag) {
        let seed = UInt64(tag.rawValue) &+ 0x1D3
        var random = RepeatableRandomNumberGenerator(seed: seed)
        let values = (0..<300).map { _ in Self.randomField(tag, &random) } + [.null]
        let encoded = values.map { IndexKey.encode([$0]) }
        for i in values.indices {
            for j in values.indices {
                let expected = Self.referenceCompare(values[i], values[j])
                let actual = IndexKey.compare(encoded[i], encoded[j])
                if Self.sign(actual) != expected {
                    Issue.record("seed \(seed): \(values[i]) vs \(values[j]): value order \(expected), bytes \(actual)")
                    return
                }
            }
        }
    }

    /// `appendKey` reads some fields straight from the row's bytes (integers and references) and decodes the others:
    /// either way its key is the encoding of the fields the row decodes to, and it throws exactly when one of them
    /// does not decode, for every single-byte damage of the row too.
    @Test(arguments: RowRecord.Tag.allCases)
    func appendKeyEncodesTheFieldsTheRowDecodesTo(tag: RowRecord.Tag) throws {
        var random = RepeatableRandomNumberGenerator(seed: UInt64(tag.rawValue) &+ 0xA9_9E)
        let positions = [2, 0, 3]
        func outcomes(_ row: [UInt8]) -> (key: [UInt8]?, expected: [UInt8]?) {
            row.withUnsafeBytes { bytes in
                guard let header = try? RowRecord.Header.decode(bytes) else { return (nil, nil) }
                var key: [UInt8] = []
                let made = (try? IndexKey.appendKey(fields: positions, of: bytes, header: header, to: &key)) != nil
                let fields = positions.map { position -> RowRecord.Field? in
                    guard position < header.fieldCount else { return .null }
                    return try? RowRecord.field(at: position, in: bytes)
                }
                let decoded = fields.allSatisfy { $0 != nil } ? IndexKey.encode(fields.map { $0! }) : nil
                return (made ? key : nil, decoded)
            }
        }
        for round in 0..<40 {
            let fields = [Self.randomField(tag, &random), .int64(Int64(round) - 20), Self.randomField(tag, &random)]
            var row = RowRecord.encode(entityID: 1, rowVersion: 1, fields: fields)
            let whole = outcomes(row)
            #expect(whole.key != nil && whole.key == whole.expected, "round \(round): \(fields)")
            for offset in row.indices {
                let original = row[offset]
                row[offset] = original ^ UInt8(truncatingIfNeeded: random.next() | 1)
                let damaged = outcomes(row)
                #expect(damaged.key == damaged.expected, "round \(round) byte \(offset): \(fields)")
                row[offset] = original
            }
        }
    }

    /// The bound recovery checks a gathered row's key against (`keyLengthBound`) is never shorter than the key
    /// `appendKey` makes, and it throws exactly when `appendKey` does, for every single-byte damage of the row too.
    @Test(arguments: RowRecord.Tag.allCases)
    func theKeyLengthBoundHoldsTheKeyAndFailsWithIt(tag: RowRecord.Tag) throws {
        let seed = UInt64(tag.rawValue) &+ 0xB0_0D
        var random = RepeatableRandomNumberGenerator(seed: seed)
        for round in 0..<40 {
            let fields = [Self.randomField(tag, &random), .int64(Int64(round)), Self.randomField(tag, &random)]
            var row = RowRecord.encode(entityID: 1, rowVersion: 1, fields: fields)
            // Fields 0 and 2, and one past the last field (a null part).
            let positions = [2, 0, 3]
            func outcomes(_ row: [UInt8]) -> (key: Result<Int, FormatError>, bound: Result<Int, FormatError>) {
                row.withUnsafeBytes { bytes in
                    guard let header = try? RowRecord.Header.decode(bytes) else {
                        return (.failure(.invalidField("header")), .failure(.invalidField("header")))
                    }
                    let key = Result { () throws(FormatError) -> Int in
                        var key: [UInt8] = []
                        try IndexKey.appendKey(fields: positions, of: bytes, header: header, to: &key)
                        return key.count
                    }
                    let bound = Result { () throws(FormatError) -> Int in
                        try IndexKey.keyLengthBound(fields: positions, of: bytes, header: header)
                    }
                    return (key, bound)
                }
            }
            let whole = outcomes(row)
            let length = try whole.key.get()
            #expect(try whole.bound.get() >= length, "seed \(seed) round \(round): \(fields)")
            for offset in row.indices {
                let original = row[offset]
                row[offset] = original ^ UInt8(truncatingIfNeeded: random.next() | 1)
                let damaged = outcomes(row)
                switch (damaged.key, damaged.bound) {
                case (.success(let key), .success(let bound)):
                    #expect(bound >= key, "seed \(seed) round \(round) byte \(offset)")
                case (.failure, .failure): break
                default:
                    Issue.record(
                        "seed \(seed) round \(round) byte \(offset): key \(damaged.key), bound \(damaged.bound)")
                }
                row[offset] = original
            }
        }
    }

    @Test func compositeKeysOrderPartByPart() {
        let seed: UInt64 = 77
        var random = RepeatableRandomNumberGenerator(seed: seed)
        let tags: [RowRecord.Tag] = [.string, .int64, .bytes, .double, .decimal, .null, .uuid]
        var keys: [[Field]] = []
        for _ in 0..<400 {
            let count = Int.random(in: 1...3, using: &random)
            // Mostly the same types per position (as an index has), sometimes null, sharing prefixes often.
            var key: [Field] = []
            for position in 0..<count {
                if let base = keys.randomElement(using: &random), base.count > position, Bool.random(using: &random) {
                    key.append(base[position])
                } else {
                    let tag = Int.random(in: 0..<8, using: &random) == 0 ? .null : tags[position % tags.count]
                    key.append(Self.randomField(tag, &random))
                }
            }
            keys.append(key)
        }
        let encoded = keys.map(IndexKey.encode)
        for i in keys.indices {
            for j in keys.indices
            where Self.sign(IndexKey.compare(encoded[i], encoded[j])) != Self.referenceCompare(keys[i], keys[j]) {
                Issue.record("seed \(seed): \(keys[i]) vs \(keys[j])")
                return
            }
        }
        // A key's first parts encode to a byte prefix of the whole key.
        for key in keys {
            let whole = IndexKey.encode(key)
            for length in 0...key.count {
                #expect(whole.starts(with: IndexKey.encodePrefix(Array(key[..<length]))))
            }
        }
    }

    @Test(arguments: RowRecord.Tag.allCases)
    func roundTripsUpToNormalisation(tag: RowRecord.Tag) throws {
        var random = RepeatableRandomNumberGenerator(seed: 900 + UInt64(tag.rawValue))
        for _ in 0..<500 {
            let key = [Self.randomField(tag, &random), Self.randomField(.int64, &random)]
            let bytes = IndexKey.encode(key)
            let decoded = try IndexKey.decode(bytes)
            #expect(IndexKey.encode(decoded) == bytes, "\(key)")
            #expect(Self.referenceCompare(decoded, key) == 0, "\(key) came back as \(decoded)")
            switch key[0] {
            case .double(let value) where !value.isNaN && value != 0, .date(let value) where !value.isNaN && value != 0:
                #expect(decoded == key)
            case .decimal, .double, .date, .float: break
            default: #expect(decoded == key)
            }
        }
    }

    @Test func normalisationIsDocumented() throws {
        #expect(try IndexKey.decode(IndexKey.encode([.double(-0.0)])) == [.double(0)])
        #expect(try IndexKey.decode(IndexKey.encode([.float(-Float.nan)])) == [.float(.nan)])
        let threeHalves = RowRecord.DecimalBits(exponent: -2, isNegative: false, isCompact: false, mantissa: [150])
        #expect(
            try IndexKey.decode(IndexKey.encode([.decimal(threeHalves)]))
                == [.decimal(.init(exponent: -1, isNegative: false, isCompact: true, mantissa: [15]))])
        #expect(
            IndexKey.encode([.decimal(threeHalves)])
                == IndexKey.encode([.decimal(.init(exponent: -1, isNegative: false, isCompact: true, mantissa: [15]))]))
    }

    @Test func encodingsArePinned() {
        #expect(IndexKey.encode([.null]) == [0])
        #expect(IndexKey.encode([.int64(1)]) == [1, 0x80, 0, 0, 0, 0, 0, 0, 1])
        #expect(IndexKey.encode([.int64(-1)]) == [1, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(IndexKey.encode([.double(1)]) == [2, 0xBF, 0xF0, 0, 0, 0, 0, 0, 0])
        #expect(IndexKey.encode([.string("a\u{0}b")]) == [5, 0x61, 0, 0xFF, 0x62, 0, 0])
        #expect(IndexKey.encode([.boolean(true), .reference(2)]) == [4, 1, 12, 0, 0, 0, 0, 0, 0, 0, 2])
        // 1.5 = 0.15 × 10^1: positive, exponent 1 + 0x8000, digits 1 and 5 as 2 and 6, then 0.
        let decimal = RowRecord.DecimalBits(exponent: -1, isNegative: false, isCompact: true, mantissa: [15])
        #expect(IndexKey.encode([.decimal(decimal)]) == [9, 3, 0x80, 0x01, 2, 6, 0])
        #expect(IndexKey.entry(key: [0], rowID: 0x0102) == [0, 0, 0, 0, 0, 0, 0, 1, 2])
    }

    @Test func theWorkedExampleOfFormatMD() {
        let entry = IndexKey.entry(key: IndexKey.encode([.string("Ab"), .int64(36), .null]), rowID: 7)
        #expect(entry == [5, 0x41, 0x62, 0, 0, 1, 0x80, 0, 0, 0, 0, 0, 0, 0x24, 0, 0, 0, 0, 0, 0, 0, 0, 7])
    }

    @Test func randomBytesNeverTrapAndDecodeOnlyCanonically() {
        var random = RepeatableRandomNumberGenerator(seed: 4242)
        var decoded = 0
        for _ in 0..<20_000 {
            var bytes = random.bytes(Int.random(in: 0...24, using: &random))
            if !bytes.isEmpty { bytes[0] = UInt8.random(in: 0...13, using: &random) }
            guard let key = try? IndexKey.decode(bytes) else { continue }
            decoded += 1
            #expect(IndexKey.encode(key) == bytes, "\(bytes) decoded to \(key)")
        }
        #expect(decoded > 100)
    }

    @Test func malformedKeysAreTypedErrors() {
        #expect(isInvalidField(formatError([]) { try IndexKey.decode($0) }))
        #expect(isInvalidField(formatError([13]) { try IndexKey.decode($0) }))
        #expect(isTruncated(formatError([1, 0x80]) { try IndexKey.decode($0) }))
        #expect(isTruncated(formatError([5, 0x61]) { try IndexKey.decode($0) }))
        #expect(isInvalidField(formatError([5, 0, 1]) { try IndexKey.decode($0) }))
        #expect(isInvalidField(formatError([4, 2]) { try IndexKey.decode($0) }))
        #expect(isInvalidField(formatError([5, 0xC3, 0, 0]) { try IndexKey.decode($0) }))
        #expect(isInvalidField(formatError([9, 7]) { try IndexKey.decode($0) }))
        #expect(isInvalidField(formatError([9, 3, 0x80, 0x01, 1, 0]) { try IndexKey.decode($0) }))  // leading zero
        #expect(isInvalidField(formatError([UInt8](repeating: 0, count: 17)) { try IndexKey.decode($0) }))
        // -0.0 is stored as 0.0: its own bit pattern is not canonical.
        let negativeZero = (~(-0.0).bitPattern).bigEndian
        #expect(
            isInvalidField(
                formatError([2] + withUnsafeBytes(of: negativeZero) { Array($0) }) { try IndexKey.decode($0) }))
    }

    @Test func separatorsAndSuccessors() {
        #expect(IndexKey.prefixSuccessor([1, 2]) == [1, 3])
        #expect(IndexKey.prefixSuccessor([1, 0xFF]) == [2])
        #expect(IndexKey.prefixSuccessor([0xFF]) == nil)
        #expect(IndexKey.prefixSuccessor([]) == nil)
        #expect(IndexKey.shortestSeparator(after: [1, 2, 3], upTo: [1, 5, 0]) == [1, 5])
        #expect(IndexKey.shortestSeparator(after: [1, 2], upTo: [1, 2, 0]) == [1, 2, 0])
    }
}
