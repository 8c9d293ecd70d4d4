import StrataQuery
import Testing

/// Malformed format strings: each fails with a typed error at the right character offset, saying what was
/// expected.
@Suite struct PredicateSyntaxErrorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var format: String
        var offset: Int
        var expected: String
        var reason: PredicateSyntaxError.Reason = .unexpectedToken
        var arguments: [QueryValue] = []
        var testDescription: String { format }
    }

    static let cases: [Case] = [
        Case(format: "", offset: 0, expected: "a predicate"),
        Case(format: "   ", offset: 3, expected: "a predicate"),
        Case(format: "age >", offset: 5, expected: "an expression"),
        Case(format: "age > 3 AND", offset: 11, expected: "a predicate"),
        Case(format: "age 3", offset: 4, expected: "a comparison operator"),
        Case(format: "age", offset: 3, expected: "a comparison operator"),
        Case(format: "age > 3)", offset: 7, expected: "end of input (an AND, OR or closing parenthesis is missing?)"),
        Case(format: "(age > 3", offset: 8, expected: "')'"),
        Case(format: "name == 'abc", offset: 8, expected: "a closing ' for this string", reason: .unterminatedString),
        Case(format: "name BEGINSWITH[x] 'a'", offset: 16, expected: "c, d or n"),
        Case(format: "name BEGINSWITH[cx] 'a'", offset: 17, expected: "c, d or n"),
        Case(format: "name BEGINSWITH[c 'a'", offset: 18, expected: "']'"),
        Case(format: "age > %d", offset: 6, expected: "argument 1 (only 0 given)", reason: .missingArgument(index: 1)),
        Case(
            format: "a == %3$@", offset: 5, expected: "argument 3 (only 1 given)", reason: .missingArgument(index: 3),
            arguments: [.int(1)]),
        Case(
            format: "%K == 1", offset: 0, expected: "a key path string for '%K'",
            reason: .argumentTypeMismatch(index: 1), arguments: [.int(1)]),
        Case(
            format: "a == %d", offset: 5, expected: "an integer for '%d'", reason: .argumentTypeMismatch(index: 1),
            arguments: [.string("x")]),
        Case(format: "a == %q", offset: 7, expected: "an argument specifier (%@, %K, %d, %f)"),
        Case(format: "SUBQUERY(a, b, c > 1).@count > 0", offset: 12, expected: "a variable ($name)"),
        Case(
            format: "a.@bogus > 1", offset: 2,
            expected: "a collection operator (@count, @sum, @avg, @min, @max, @distinctUnionOfObjects, @unionOfObjects)"
        ),
        Case(format: "a. > 1", offset: 3, expected: "a key, %K or a collection operator after '.'"),
        Case(format: "a == 0x", offset: 7, expected: "a digit in base 16", reason: .invalidNumber),
        Case(format: "a == 1e+", offset: 8, expected: "the digits of an exponent", reason: .invalidNumber),
        Case(
            format: "a == 0x1FFFFFFFFFFFFFFFF", offset: 5, expected: "an integer that fits in 64 bits",
            reason: .invalidNumber),
        Case(
            format: "a == 'x\\u12'", offset: 11, expected: "four hexadecimal digits after \\u", reason: .invalidEscape),
        Case(
            format: "a == '\\udc00'", offset: 6, expected: "a Unicode scalar value, not a lone surrogate",
            reason: .invalidEscape),
        Case(format: "a & b", offset: 3, expected: "'&&'"),
        Case(format: "a == ;", offset: 5, expected: "a predicate token"),
        Case(format: "a == $", offset: 6, expected: "a variable name"),
        Case(format: "AND == 1", offset: 0, expected: "an expression (write #AND for a key named AND)"),
        Case(format: "ANY", offset: 3, expected: "a predicate"),
        Case(format: "a BETWEEN {1, 2", offset: 15, expected: "'}'"),
        Case(format: "a == CAST('x', 'NSDate')", offset: 10, expected: "a number of seconds", reason: .invalidCast),
        Case(
            format: "a == CAST(1, 'NSColor')", offset: 13, expected: "NSDate, NSUUID, NSURL, NSData or NSDecimalNumber",
            reason: .invalidCast),
        // Offsets count characters, not bytes or scalars: "é" (e + combining acute) is one character.
        Case(format: "'e\u{301}' ==", offset: 6, expected: "an expression"),
        Case(format: "名前 ==", offset: 5, expected: "an expression"),
    ]

    @Test(arguments: cases)
    func malformedFormatIsATypedErrorWithPosition(_ testCase: Case) {
        #expect {
            try PredicateParser.parse(testCase.format, arguments: testCase.arguments)
        } throws: { error in
            guard let error = error as? PredicateSyntaxError else { return false }
            #expect(error.offset == testCase.offset, "\(error)")
            #expect(error.expected == testCase.expected, "\(error)")
            #expect(error.reason == testCase.reason, "\(error)")
            return true
        }
    }

    @Test func errorsSayWhatWasFound() {
        #expect {
            try PredicateParser.parse("age > 3 OR OR b == 1")
        } throws: { error in
            let error = error as? PredicateSyntaxError
            return error?.found == "'OR'"
                && error?.description
                    == "expected an expression (write #OR for a key named OR) at offset 11, found 'OR'"
        }
        #expect {
            try PredicateParser.parse("age >")
        } throws: { error in
            (error as? PredicateSyntaxError)?.description == "expected an expression at offset 5, found end of input"
        }
    }
}
