/// How strings compare: the `[c]`, `[d]` and `[n]` modifiers of a format string.
///
/// For example: `name BEGINSWITH[cd] "e"` holds for "Émile" and "elise".
public struct ComparisonOptions: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The raw bits.
    public let rawValue: UInt8

    /// Options from their raw bits.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// `[c]`: case-insensitive ("A" equals "a").
    public static let caseInsensitive = ComparisonOptions(rawValue: 1 << 0)
    /// `[d]`: diacritic-insensitive ("é" equals "e").
    public static let diacriticInsensitive = ComparisonOptions(rawValue: 1 << 1)
    /// `[n]`: the strings are already normalized (a hint for stores; evaluation in memory ignores it).
    public static let normalized = ComparisonOptions(rawValue: 1 << 2)

    /// The modifier as written after an operator: `[cd]`, or the empty string without options.
    public var description: String {
        var letters = ""
        if contains(.caseInsensitive) { letters += "c" }
        if contains(.diacriticInsensitive) { letters += "d" }
        if contains(.normalized) { letters += "n" }
        return letters.isEmpty ? "" : "[\(letters)]"
    }

    /// Whether the options change how strings compare (`[n]` alone does not).
    var folds: Bool { !intersection([.caseInsensitive, .diacriticInsensitive]).isEmpty }

    /// `string` with case and/or diacritics folded away as the options ask.
    func fold(_ string: String) -> String {
        var options: String.CompareOptions = []
        if contains(.caseInsensitive) { options.insert(.caseInsensitive) }
        if contains(.diacriticInsensitive) { options.insert(.diacriticInsensitive) }
        return options.isEmpty ? string : string.folding(options: options, locale: nil)
    }
}
