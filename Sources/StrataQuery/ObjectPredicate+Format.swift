extension ObjectPredicate {
    /// Parses an `NSPredicate` format string, substituting its `%` specifiers with arguments.
    ///
    /// For example:
    /// ```swift
    /// let adults = try ObjectPredicate(format: "age >= %d AND %K BEGINSWITH[c] %@", 18, "name", "a")
    /// let chosen = try ObjectPredicate(format: "SELF IN %@", selectedIDs)
    /// ```
    ///
    /// - Parameters:
    ///   - format: the format string; see ``PredicateParser`` for the grammar.
    ///   - arguments: one value per specifier: `%@` any value, `%K` a key path string (a whole key path or any
    ///     step of one, as NSPredicate allows: `%K`, `moods.%K`, `ANY %K.%K`, `$x.%K`, `%K.@count`),
    ///     `%d`/`%i`/`%u` an integer, `%f`/`%g` a number.
    /// - Throws: ``PredicateSyntaxError``.
    public init(format: String, _ arguments: any QueryValueConvertible...) throws(PredicateSyntaxError) {
        self = try PredicateParser.parse(format, arguments: arguments.map(\.queryValue))
    }

    /// Parses an `NSPredicate` format string with an array of arguments.
    ///
    /// - Parameters:
    ///   - format: the format string; see ``PredicateParser`` for the grammar.
    ///   - arguments: one value per specifier.
    /// - Throws: ``PredicateSyntaxError``.
    public init(format: String, arguments: [QueryValue]) throws(PredicateSyntaxError) {
        self = try PredicateParser.parse(format, arguments: arguments)
    }
}
