/// Splits a format string into tokens, one at a time as the parser asks (so that the first error in reading
/// order is the one reported). Works on Unicode scalars; offsets are scalar offsets until
/// ``PredicateParser`` turns them into character offsets for errors.
struct PredicateLexer {
    /// A `%` specifier: its conversion character and, for `%n$…`, its 1-based position.
    struct Specifier: Equatable {
        var conversion: Unicode.Scalar
        var position: Int?
    }

    enum Kind: Equatable {
        /// A bare word: a key, or a keyword (the parser compares case-insensitively).
        case word(String)
        /// `#word`: always a key.
        case escapedWord(String)
        /// `$name`
        case variable(String)
        /// `@name`
        case collectionOperator(String)
        case int(Int64)
        case double(Double)
        case string(String)
        case argument(Specifier)
        /// Punctuation and operators, normalized: `=` is `==`, `<>` is `!=`, `=<` is `<=`, `=>` is `>=`.
        case symbol(String)
        case end
    }

    struct Token {
        var kind: Kind
        /// Scalar offset of the token's first scalar.
        var start: Int
        /// Scalar offset just past the token.
        var end: Int
    }

    let scalars: [Unicode.Scalar]
    private(set) var position = 0

    init(_ string: String) {
        scalars = Array(string.unicodeScalars)
    }

    /// The words that are not keys unless escaped with `#`, upper-cased.
    static let keywords: Set<String> = [
        "AND", "OR", "NOT", "IN", "LIKE", "MATCHES", "CONTAINS", "BEGINSWITH", "ENDSWITH", "BETWEEN", "ANY",
        "SOME", "ALL", "NONE", "SUBQUERY", "SELF", "NIL", "NULL", "TRUE", "FALSE", "YES", "NO", "TRUEPREDICATE",
        "FALSEPREDICATE", "CAST",
    ]

    static func isWordStart(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return scalar.properties.isAlphabetic || scalar == "_" }
        return scalar.properties.isAlphabetic
    }

    static func isWordContinuation(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return scalar.properties.isAlphabetic || scalar == "_" || ("0"..."9").contains(scalar) }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber: return true
        default: return scalar.properties.isAlphabetic
        }
    }

    /// Whether `word` reads back as one word token that is not a keyword.
    static func isPlainKey(_ word: String) -> Bool {
        guard let first = word.unicodeScalars.first, isWordStart(first) else { return false }
        return word.unicodeScalars.allSatisfy(isWordContinuation) && !keywords.contains(word.uppercased())
    }

    /// How a key is written in a format string: as it is, or with `#` when it is a keyword. Keys that are not
    /// words at all (possible only through `%K` or ``QueryKeyPath/init(_:)``) are written as they are and do not
    /// parse back.
    static func escapedKey(_ key: String) -> String {
        guard let first = key.unicodeScalars.first, isWordStart(first),
            key.unicodeScalars.allSatisfy(isWordContinuation)
        else { return key }
        return keywords.contains(key.uppercased()) ? "#" + key : key
    }

    private func peek(_ ahead: Int = 0) -> Unicode.Scalar? {
        let index = position + ahead
        return index < scalars.count ? scalars[index] : nil
    }

    private func error(
        _ reason: PredicateSyntaxError.Reason, at offset: Int, expected: String, found: String? = nil
    ) -> PredicateSyntaxError {
        PredicateSyntaxError(
            reason: reason, offset: offset, expected: expected, found: found ?? describeScalar(at: offset))
    }

    func describeScalar(at offset: Int) -> String {
        offset < scalars.count ? "'\(Character(scalars[offset]))'" : "end of input"
    }

    /// The next token.
    mutating func next() throws(PredicateSyntaxError) -> Token {
        while let scalar = peek(), scalar.properties.isWhitespace { position += 1 }
        let start = position
        guard let scalar = peek() else { return Token(kind: .end, start: start, end: start) }
        let kind: Kind
        switch scalar {
        case "'", "\"":
            kind = .string(try readString(quote: scalar))
        case "0"..."9":
            kind = try readNumber(negative: false)
        case "-" where peek(1).map { ("0"..."9").contains($0) } ?? false:
            position += 1
            kind = try readNumber(negative: true)
        case "%":
            kind = .argument(try readSpecifier())
        case "$", "#", "@":
            position += 1
            guard let first = peek(), Self.isWordStart(first) else {
                let what = scalar == "$" ? "a variable name" : scalar == "#" ? "a key" : "a collection operator name"
                throw error(.unexpectedToken, at: position, expected: what)
            }
            let word = readWord()
            kind = scalar == "$" ? .variable(word) : scalar == "#" ? .escapedWord(word) : .collectionOperator(word)
        case _ where Self.isWordStart(scalar):
            kind = .word(readWord())
        default:
            kind = .symbol(try readSymbol())
        }
        return Token(kind: kind, start: start, end: position)
    }

    private mutating func readWord() -> String {
        var word = String.UnicodeScalarView()
        while let scalar = peek(), Self.isWordContinuation(scalar) {
            word.append(scalar)
            position += 1
        }
        return String(word)
    }

    private mutating func readSymbol() throws(PredicateSyntaxError) -> String {
        let start = position
        let first = scalars[position]
        let second = peek(1)
        position += 1
        switch (first, second) {
        case ("=", "="), ("!", "="), ("<", "="), (">", "="), ("&", "&"), ("|", "|"):
            position += 1
            return String(first) + String(second!)
        case ("<", ">"):
            position += 1
            return "!="
        case ("=", "<"):
            position += 1
            return "<="
        case ("=", ">"):
            position += 1
            return ">="
        case ("=", _): return "=="
        case ("(", _), (")", _), ("{", _), ("}", _), (",", _), (".", _), ("[", _), ("]", _), ("<", _), (">", _),
            ("!", _):
            return String(first)
        case ("&", _), ("|", _):
            throw error(.unexpectedToken, at: start + 1, expected: "'\(first)\(first)'")
        default:
            throw error(.unexpectedToken, at: start, expected: "a predicate token")
        }
    }

    /// A string literal between `quote`s. Escapes: `\\`, `\"`, `\'`, `\n`, `\r`, `\t`, `\0`, `\uXXXX` (surrogate
    /// pairs combine); any other escaped character keeps its backslash (so `LIKE "a\*"` sees the escape). `%%`
    /// is one `%`.
    private mutating func readString(quote: Unicode.Scalar) throws(PredicateSyntaxError) -> String {
        let start = position
        position += 1
        var result = String.UnicodeScalarView()
        while true {
            guard let scalar = peek() else {
                throw error(.unterminatedString, at: start, expected: "a closing \(quote) for this string")
            }
            position += 1
            switch scalar {
            case quote:
                return String(result)
            case "%" where peek() == "%":
                position += 1
                result.append("%")
            case "\\":
                guard let escaped = peek() else { continue }
                position += 1
                switch escaped {
                case "\\", "\"", "'": result.append(escaped)
                case "n": result.append("\n")
                case "r": result.append("\r")
                case "t": result.append("\t")
                case "0": result.append("\0")
                case "u": result.append(try readUnicodeEscape())
                default:
                    result.append("\\")
                    result.append(escaped)
                }
            default:
                result.append(scalar)
            }
        }
    }

    private mutating func readHex4() throws(PredicateSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let scalar = peek(), let digit = Self.digitValue(scalar, radix: 16) else {
                throw error(.invalidEscape, at: position, expected: "four hexadecimal digits after \\u")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    private mutating func readUnicodeEscape() throws(PredicateSyntaxError) -> Unicode.Scalar {
        let high = try readHex4()
        if (0xD800..<0xDC00).contains(high) {
            guard peek() == "\\", peek(1) == "u" else {
                throw error(.invalidEscape, at: position, expected: "a low surrogate \\u escape")
            }
            position += 2
            let low = try readHex4()
            guard (0xDC00..<0xE000).contains(low) else {
                throw error(.invalidEscape, at: position - 6, expected: "a low surrogate (DC00…DFFF)")
            }
            // Safe: a surrogate pair always encodes a scalar in 0x10000...0x10FFFF.
            return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))!
        }
        guard let scalar = Unicode.Scalar(high) else {
            throw error(.invalidEscape, at: position - 6, expected: "a Unicode scalar value, not a lone surrogate")
        }
        return scalar
    }

    static func digitValue(_ scalar: Unicode.Scalar, radix: Int) -> Int? {
        let value: Int
        switch scalar {
        case "0"..."9": value = Int(scalar.value - 48)
        case "a"..."z": value = Int(scalar.value - 97 + 10)
        case "A"..."Z": value = Int(scalar.value - 65 + 10)
        default: return nil
        }
        return value < radix ? value : nil
    }

    /// A number: `0x…`, `0o…`, `0b…` integers, decimal integers (a double when they do not fit in 64 bits), and
    /// decimals with a fraction and/or exponent.
    private mutating func readNumber(negative: Bool) throws(PredicateSyntaxError) -> Kind {
        let start = position
        if peek() == "0", let marker = peek(1), let radix = ["x": 16, "X": 16, "o": 8, "O": 8, "b": 2, "B": 2][marker] {
            position += 2
            var magnitude: UInt64 = 0
            var digits = 0
            while let scalar = peek(), let digit = Self.digitValue(scalar, radix: radix) {
                let (shifted, overflow1) = magnitude.multipliedReportingOverflow(by: UInt64(radix))
                let (sum, overflow2) = shifted.addingReportingOverflow(UInt64(digit))
                guard !overflow1, !overflow2 else {
                    throw error(
                        .invalidNumber, at: start, expected: "an integer that fits in 64 bits", found: "a longer one")
                }
                magnitude = sum
                digits += 1
                position += 1
            }
            guard digits > 0 else { throw error(.invalidNumber, at: position, expected: "a digit in base \(radix)") }
            guard let value = Self.signed(magnitude, negative: negative) else {
                throw error(
                    .invalidNumber, at: start, expected: "an integer that fits in 64 bits", found: "a larger one")
            }
            return .int(value)
        }
        var text = negative ? "-" : ""
        var isInteger = true
        func digits() {
            while let scalar = peek(), ("0"..."9").contains(scalar) {
                text.unicodeScalars.append(scalar)
                position += 1
            }
        }
        digits()
        if peek() == ".", let after = peek(1), ("0"..."9").contains(after) {
            isInteger = false
            text += "."
            position += 1
            digits()
        }
        if let e = peek(), e == "e" || e == "E" {
            let sign = peek(1)
            let hasSign = sign == "+" || sign == "-"
            if let digit = peek(hasSign ? 2 : 1), ("0"..."9").contains(digit) {
                isInteger = false
                text += "e"
                if hasSign { text.unicodeScalars.append(sign!) }
                position += hasSign ? 2 : 1
                digits()
            } else {
                throw error(.invalidNumber, at: position + (hasSign ? 2 : 1), expected: "the digits of an exponent")
            }
        }
        if isInteger {
            var magnitude: UInt64 = 0
            var fits = true
            for scalar in text.unicodeScalars where scalar != "-" {
                let (shifted, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = shifted.addingReportingOverflow(UInt64(scalar.value - 48))
                if overflow1 || overflow2 {
                    fits = false
                    break
                }
                magnitude = sum
            }
            if fits, let value = Self.signed(magnitude, negative: negative) { return .int(value) }
        }
        // Safe: `text` is an optional minus, digits, an optional fraction and an optional exponent, all of which
        // Double parses (to infinity when out of range).
        return .double(Double(text) ?? .nan)
    }

    static func signed(_ magnitude: UInt64, negative: Bool) -> Int64? {
        if !negative { return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil }
        if magnitude == UInt64(Int64.max) + 1 { return .min }
        return magnitude <= UInt64(Int64.max) ? -Int64(magnitude) : nil
    }

    /// `%@`, `%K`, `%d`, `%i`, `%u`, `%f`, `%g` with optional length modifiers (`l`, `ll`, `h`, `q`, `z`) and an
    /// optional position (`%2$@`).
    private mutating func readSpecifier() throws(PredicateSyntaxError) -> Specifier {
        position += 1
        var positionNumber: Int?
        var lookahead = position
        var number = 0
        while lookahead < scalars.count, ("0"..."9").contains(scalars[lookahead]), number < 1_000_000 {
            number = number * 10 + Int(scalars[lookahead].value - 48)
            lookahead += 1
        }
        if lookahead > position, lookahead < scalars.count, scalars[lookahead] == "$" {
            guard number > 0 else {
                throw error(.unexpectedToken, at: position, expected: "an argument position from 1")
            }
            positionNumber = number
            position = lookahead + 1
        }
        while let scalar = peek(), ["l", "h", "q", "z"].contains(scalar) { position += 1 }
        guard let conversion = peek(), ["@", "K", "d", "i", "u", "f", "g"].contains(conversion) else {
            throw error(.unexpectedToken, at: position, expected: "an argument specifier (%@, %K, %d, %f)")
        }
        position += 1
        return Specifier(conversion: conversion, position: positionNumber)
    }
}
