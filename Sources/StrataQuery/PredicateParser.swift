import Foundation

/// Parses `NSPredicate` format strings into ``ObjectPredicate``s.
///
/// The grammar, lowest precedence first (keywords are case-insensitive; a key that is a keyword is written
/// with `#`, as `#in`):
///
/// ```
/// predicate   := and (("OR" | "||") and)*
/// and         := not (("AND" | "&&") not)*
/// not         := ("NOT" | "!") not | "(" predicate ")" | "TRUEPREDICATE" | "FALSEPREDICATE" | comparison
/// comparison  := ["ANY" | "SOME" | "ALL" | "NONE"] expression operator ["[" ("c"|"d"|"n")+ "]"] expression
/// operator    := "==" | "=" | "!=" | "<>" | "<" | "<=" | "=<" | ">" | ">=" | "=>" | "BETWEEN" | "IN"
///              | "CONTAINS" | "BEGINSWITH" | "ENDSWITH" | "LIKE" | "MATCHES"
/// expression  := primary ("." (key | "%K" | "@" operatorName))*
/// primary     := key | "#" key | "@" operatorName | "SELF" | "$" name | literal | argument
///              | "{" [expression ("," expression)*] "}"
///              | "SUBQUERY" "(" expression "," "$" name "," predicate ")"
///              | "CAST" "(" literal "," string ")"
/// literal     := number | string | "TRUE" | "YES" | "FALSE" | "NO" | "NIL" | "NULL"
/// argument    := "%@" | "%K" | "%d" | "%i" | "%u" | "%f" | "%g"   (with l/ll/h/q/z, and "%n$" positions)
/// ```
///
/// Numbers are decimal integers, `0x`/`0o`/`0b` integers, and decimals with a fraction and/or an exponent; a
/// minus sign directly before a digit makes a negative literal. Strings are single- or double-quoted, with
/// the escapes `\\ \" \' \n \r \t \0 \uXXXX`, `%%` for `%`, and no argument substitution inside. `CAST` turns a
/// literal into a date (`CAST(726.5, "NSDate")`, seconds since 2001), `NSUUID`, `NSURL`, `NSData` (base64) or
/// `NSDecimalNumber` value (how ``QueryValue/predicateFormat`` writes them).
///
/// Nesting (parentheses, `NOT`, aggregates, subqueries) deeper than ``maximumDepth`` is rejected with
/// ``PredicateSyntaxError/Reason/nestingTooDeep(limit:)``, so that no input can exhaust the stack.
///
/// For example:
/// ```swift
/// let predicate = try PredicateParser.parse("name BEGINSWITH[c] %@ AND age > %d", arguments: [.string("a"), .int(3)])
/// ```
public struct PredicateParser {
    /// The deepest nesting a format string may have.
    public static let maximumDepth = 256

    private var lexer: PredicateLexer
    private var token: PredicateLexer.Token
    private let arguments: [QueryValue]
    private var nextArgument = 0
    private var depth = 0

    /// Parses a format string.
    ///
    /// - Parameters:
    ///   - format: the format string.
    ///   - arguments: the values of its `%` specifiers, in order (positional specifiers count from 1).
    ///     Arguments left over are ignored, as `NSPredicate` does.
    /// - Returns: the predicate.
    /// - Throws: ``PredicateSyntaxError`` with the offset of the first problem, what was expected there and what
    ///   was found.
    public static func parse(
        _ format: String, arguments: [QueryValue] = []
    ) throws(PredicateSyntaxError)
        -> ObjectPredicate
    {
        var parser = try PredicateParser(format, arguments: arguments)
        do throws(PredicateSyntaxError) {
            let predicate = try parser.parsePredicate()
            guard case .end = parser.token.kind else {
                throw parser.unexpected(expected: "end of input (an AND, OR or closing parenthesis is missing?)")
            }
            return predicate
        } catch {
            throw parser.characterOffset(error)
        }
    }

    /// Parses a format string holding one expression (`"department.name"`, `"SUBQUERY(…).@count"`), as for a
    /// sort key or a fetched expression.
    ///
    /// - Parameters:
    ///   - format: the format string.
    ///   - arguments: the values of its `%` specifiers.
    /// - Returns: the expression.
    /// - Throws: ``PredicateSyntaxError``.
    public static func parseExpression(
        _ format: String, arguments: [QueryValue] = []
    ) throws(PredicateSyntaxError)
        -> ObjectExpression
    {
        var parser = try PredicateParser(format, arguments: arguments)
        do throws(PredicateSyntaxError) {
            let expression = try parser.parseExpression()
            guard case .end = parser.token.kind else { throw parser.unexpected(expected: "end of input") }
            return expression
        } catch {
            throw parser.characterOffset(error)
        }
    }

    private init(_ format: String, arguments: [QueryValue]) throws(PredicateSyntaxError) {
        lexer = PredicateLexer(format)
        self.arguments = arguments
        token = PredicateLexer.Token(kind: .end, start: 0, end: 0)
        do throws(PredicateSyntaxError) {
            token = try lexer.next()
        } catch {
            throw Self.characterOffset(error, in: lexer.scalars)
        }
    }

    // MARK: - Errors

    /// Errors are made with scalar offsets; users get character offsets.
    private func characterOffset(_ error: PredicateSyntaxError) -> PredicateSyntaxError {
        Self.characterOffset(error, in: lexer.scalars)
    }

    private static func characterOffset(
        _ error: PredicateSyntaxError, in scalars: [Unicode.Scalar]
    )
        -> PredicateSyntaxError
    {
        var converted = error
        let prefix = scalars[..<min(error.offset, scalars.count)]
        converted.offset = String(String.UnicodeScalarView(prefix)).count
        return converted
    }

    private func describe(_ token: PredicateLexer.Token) -> String {
        if case .end = token.kind { return "end of input" }
        var text = String(String.UnicodeScalarView(lexer.scalars[token.start..<token.end]))
        if text.count > 24 { text = String(text.prefix(24)) + "…" }
        return "'\(text)'"
    }

    private func unexpected(expected: String) -> PredicateSyntaxError {
        PredicateSyntaxError(reason: .unexpectedToken, offset: token.start, expected: expected, found: describe(token))
    }

    // MARK: - Tokens

    private mutating func advance() throws(PredicateSyntaxError) {
        token = try lexer.next()
    }

    /// The upper-cased keyword the current token is, if it is a bare word.
    private var keyword: String? {
        if case .word(let word) = token.kind {
            let upper = word.uppercased()
            if PredicateLexer.keywords.contains(upper) { return upper }
        }
        return nil
    }

    private func isSymbol(_ symbol: String) -> Bool {
        token.kind == .symbol(symbol)
    }

    private mutating func expect(_ symbol: String) throws(PredicateSyntaxError) {
        guard isSymbol(symbol) else { throw unexpected(expected: "'\(symbol)'") }
        try advance()
    }

    private mutating func enter() throws(PredicateSyntaxError) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw PredicateSyntaxError(
                reason: .nestingTooDeep(limit: Self.maximumDepth), offset: token.start,
                expected: "at most \(Self.maximumDepth) levels of nesting", found: "deeper nesting")
        }
    }

    // MARK: - Predicates

    private mutating func parsePredicate() throws(PredicateSyntaxError) -> ObjectPredicate {
        try enter()
        defer { depth -= 1 }
        var terms = [try parseAnd()]
        while keyword == "OR" || isSymbol("||") {
            try advance()
            terms.append(try parseAnd())
        }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    private mutating func parseAnd() throws(PredicateSyntaxError) -> ObjectPredicate {
        var terms = [try parseNot()]
        while keyword == "AND" || isSymbol("&&") {
            try advance()
            terms.append(try parseNot())
        }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    private mutating func parseNot() throws(PredicateSyntaxError) -> ObjectPredicate {
        if keyword == "NOT" || isSymbol("!") {
            try advance()
            try enter()
            defer { depth -= 1 }
            return .not(try parseNot())
        }
        if isSymbol("(") {
            try advance()
            let inner = try parsePredicate()
            try expect(")")
            return inner
        }
        switch keyword {
        case "TRUEPREDICATE":
            try advance()
            return .true
        case "FALSEPREDICATE":
            try advance()
            return .false
        default:
            return try parseComparison()
        }
    }

    private mutating func parseComparison() throws(PredicateSyntaxError) -> ObjectPredicate {
        var modifier = PredicateComparison.Modifier.direct
        var negated = false
        switch keyword {
        case "ANY", "SOME":
            modifier = .any
            try advance()
        case "ALL":
            modifier = .all
            try advance()
        case "NONE":
            modifier = .any
            negated = true
            try advance()
        default: break
        }
        if case .end = token.kind { throw unexpected(expected: "a predicate") }
        let left = try parseExpression()
        let op: PredicateComparison.Operator
        switch (token.kind, keyword) {
        case (.symbol("=="), _): op = .equal
        case (.symbol("!="), _): op = .notEqual
        case (.symbol("<"), _): op = .lessThan
        case (.symbol("<="), _): op = .lessThanOrEqual
        case (.symbol(">"), _): op = .greaterThan
        case (.symbol(">="), _): op = .greaterThanOrEqual
        case (_, "BETWEEN"): op = .between
        case (_, "IN"): op = .in
        case (_, "CONTAINS"): op = .contains
        case (_, "BEGINSWITH"): op = .beginsWith
        case (_, "ENDSWITH"): op = .endsWith
        case (_, "LIKE"): op = .like
        case (_, "MATCHES"): op = .matches
        default: throw unexpected(expected: "a comparison operator")
        }
        try advance()
        let options = try parseOptions()
        let right = try parseExpression()
        let comparison = ObjectPredicate.comparison(
            PredicateComparison(left, op, right, modifier: modifier, options: options))
        return negated ? .not(comparison) : comparison
    }

    private mutating func parseOptions() throws(PredicateSyntaxError) -> ComparisonOptions {
        guard isSymbol("[") else { return [] }
        try advance()
        guard case .word(let letters) = token.kind else { throw unexpected(expected: "c, d or n") }
        var options: ComparisonOptions = []
        for (index, letter) in letters.unicodeScalars.enumerated() {
            switch letter {
            case "c", "C": options.insert(.caseInsensitive)
            case "d", "D": options.insert(.diacriticInsensitive)
            case "n", "N": options.insert(.normalized)
            default:
                throw PredicateSyntaxError(
                    reason: .unexpectedToken, offset: token.start + index, expected: "c, d or n",
                    found: "'\(Character(letter))'")
            }
        }
        try advance()
        try expect("]")
        return options
    }

    // MARK: - Expressions

    private mutating func parseExpression() throws(PredicateSyntaxError) -> ObjectExpression {
        try enter()
        defer { depth -= 1 }
        var expression = try parsePrimary()
        while isSymbol(".") {
            try advance()
            let components: [QueryKeyPath.Component]
            switch token.kind {
            case .word(let word), .escapedWord(let word): components = [.key(word)]
            case .collectionOperator: components = [try collectionOperator()]
            case .argument(let specifier) where specifier.conversion == "K":
                // `%K` anywhere in a key path (`moods.%K`, `%K.%K`, `$x.%K`): its components, as NSPredicate does.
                guard case .keyPath(let path, _) = try argument(specifier) else {
                    throw unexpected(expected: "a key path string")
                }
                components = path.components
            default: throw unexpected(expected: "a key, %K or a collection operator after '.'")
            }
            try advance()
            for component in components { expression = Self.appending(component, to: expression) }
        }
        return expression
    }

    private static func appending(_ component: QueryKeyPath.Component, to base: ObjectExpression) -> ObjectExpression {
        if case .keyPath(var path, let of) = base {
            path.components.append(component)
            return .keyPath(path, of: of)
        }
        return .keyPath(QueryKeyPath(components: [component]), of: base)
    }

    private func collectionOperator() throws(PredicateSyntaxError) -> QueryKeyPath.Component {
        guard case .collectionOperator(let name) = token.kind, let op = CollectionOperator(rawValue: name) else {
            throw unexpected(
                expected: "a collection operator ("
                    + CollectionOperator.allCases.map { "@" + $0.rawValue }
                    .joined(separator: ", ") + ")")
        }
        return .collectionOperator(op)
    }

    private mutating func parsePrimary() throws(PredicateSyntaxError) -> ObjectExpression {
        switch token.kind {
        case .int(let value):
            try advance()
            return .constant(.int(value))
        case .double(let value):
            try advance()
            return .constant(.double(value))
        case .string(let value):
            try advance()
            return .constant(.string(value))
        case .variable(let name):
            try advance()
            return .variable(name)
        case .escapedWord(let key):
            try advance()
            return .keyPath(QueryKeyPath(components: [.key(key)]), of: .evaluatedObject)
        case .collectionOperator:
            let component = try collectionOperator()
            try advance()
            return .keyPath(QueryKeyPath(components: [component]), of: .evaluatedObject)
        case .argument(let specifier):
            let expression = try argument(specifier)
            try advance()
            return expression
        case .symbol("{"):
            return try parseAggregate()
        case .word(let word):
            switch keyword {
            case nil:
                try advance()
                return .keyPath(QueryKeyPath(components: [.key(word)]), of: .evaluatedObject)
            case "SELF":
                try advance()
                return .evaluatedObject
            case "NIL", "NULL":
                try advance()
                return .constant(.null)
            case "TRUE", "YES":
                try advance()
                return .constant(.bool(true))
            case "FALSE", "NO":
                try advance()
                return .constant(.bool(false))
            case "SUBQUERY":
                return try parseSubquery()
            case "CAST":
                return try parseCast()
            default:
                throw unexpected(expected: "an expression (write #\(word) for a key named \(word))")
            }
        default:
            throw unexpected(expected: "an expression")
        }
    }

    private mutating func parseAggregate() throws(PredicateSyntaxError) -> ObjectExpression {
        try advance()
        var elements: [ObjectExpression] = []
        if !isSymbol("}") {
            elements.append(try parseExpression())
            while isSymbol(",") {
                try advance()
                elements.append(try parseExpression())
            }
        }
        try expect("}")
        return .aggregate(folding: elements)
    }

    private mutating func parseSubquery() throws(PredicateSyntaxError) -> ObjectExpression {
        try advance()
        try expect("(")
        let collection = try parseExpression()
        try expect(",")
        guard case .variable(let variable) = token.kind else { throw unexpected(expected: "a variable ($name)") }
        try advance()
        try expect(",")
        let predicate = try parsePredicate()
        try expect(")")
        return .subquery(collection: collection, variable: variable, predicate: predicate)
    }

    private mutating func parseCast() throws(PredicateSyntaxError) -> ObjectExpression {
        try advance()
        try expect("(")
        let valueToken = token
        let value: QueryValue
        switch token.kind {
        case .int(let number): value = .int(number)
        case .double(let number): value = .double(number)
        case .string(let string): value = .string(string)
        case .argument(let specifier):
            guard case .constant(let argument) = try argument(specifier) else {
                throw unexpected(expected: "a value to cast, not a key path")
            }
            value = argument
        default: throw unexpected(expected: "a number or string to cast")
        }
        try advance()
        try expect(",")
        guard case .string(let type) = token.kind else { throw unexpected(expected: "a type name string") }
        let typeToken = token
        try advance()
        try expect(")")
        func invalid(_ expected: String, _ at: PredicateLexer.Token) -> PredicateSyntaxError {
            PredicateSyntaxError(reason: .invalidCast, offset: at.start, expected: expected, found: describe(at))
        }
        switch (type, value) {
        case ("NSDate", .int(let seconds)):
            return .constant(.date(Date(timeIntervalSinceReferenceDate: Double(seconds))))
        case ("NSDate", .double(let seconds)): return .constant(.date(Date(timeIntervalSinceReferenceDate: seconds)))
        case ("NSUUID", .string(let string)):
            guard let uuid = UUID(uuidString: string) else { throw invalid("a UUID string", valueToken) }
            return .constant(.uuid(uuid))
        case ("NSURL", .string(let string)):
            guard let url = URL(string: string) else { throw invalid("a URL string", valueToken) }
            return .constant(.url(url))
        case ("NSData", .string(let string)):
            guard let data = Data(base64Encoded: string) else { throw invalid("a base64 string", valueToken) }
            return .constant(.data(data))
        case ("NSDecimalNumber", .string(let string)):
            guard let decimal = Decimal(string: string, locale: Locale(identifier: "en_US_POSIX")) else {
                throw invalid("a decimal number string", valueToken)
            }
            return .constant(.decimal(decimal))
        case ("NSDate", _), ("NSUUID", _), ("NSURL", _), ("NSData", _), ("NSDecimalNumber", _):
            throw invalid(type == "NSDate" ? "a number of seconds" : "a string", valueToken)
        default:
            throw invalid("NSDate, NSUUID, NSURL, NSData or NSDecimalNumber", typeToken)
        }
    }

    // MARK: - Arguments

    private mutating func argument(
        _ specifier: PredicateLexer.Specifier
    ) throws(PredicateSyntaxError)
        -> ObjectExpression
    {
        let index: Int
        if let position = specifier.position {
            index = position - 1
        } else {
            index = nextArgument
            nextArgument += 1
        }
        guard index < arguments.count else {
            throw PredicateSyntaxError(
                reason: .missingArgument(index: index + 1), offset: token.start,
                expected: "argument \(index + 1) (only \(arguments.count) given)", found: describe(token))
        }
        let value = arguments[index]
        func mismatch(_ expected: String) -> PredicateSyntaxError {
            PredicateSyntaxError(
                reason: .argumentTypeMismatch(index: index + 1), offset: token.start,
                expected: "\(expected) for \(describe(token))", found: String(describing: value))
        }
        switch specifier.conversion {
        case "K":
            guard case .string(let string) = value, !string.isEmpty else { throw mismatch("a key path string") }
            let path = QueryKeyPath(string)
            guard !path.components.contains(.key("")) else { throw mismatch("a key path without empty keys") }
            return .keyPath(path, of: .evaluatedObject)
        case "d", "i", "u":
            switch value {
            case .int: return .constant(value)
            case .bool(let flag): return .constant(.int(flag ? 1 : 0))
            case .double(let number):
                guard let integer = Int64(exactly: number) else { throw mismatch("an integer") }
                return .constant(.int(integer))
            default: throw mismatch("an integer")
            }
        case "f", "g":
            guard let number = value.number else { throw mismatch("a number") }
            return .constant(.double(number.doubleValue))
        default:
            return .constant(value)
        }
    }
}
