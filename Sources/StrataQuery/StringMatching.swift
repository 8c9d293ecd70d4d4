import Foundation
import StrataLock

/// The string operators: substring tests, `LIKE` and `MATCHES`, each folding case and diacritics as the
/// options ask.
enum StringMatching {
    /// Whether `haystack` contains `needle` (false for an empty needle, as `NSString` answers).
    static func contains(_ haystack: String, _ needle: String, options: ComparisonOptions) -> Bool {
        if needle.isEmpty { return false }
        return options.fold(haystack).contains(options.fold(needle))
    }

    /// Whether `string` begins with `prefix` (false for an empty prefix, as `NSString` answers).
    static func hasPrefix(_ string: String, _ prefix: String, options: ComparisonOptions) -> Bool {
        if prefix.isEmpty { return false }
        return options.fold(string).hasPrefix(options.fold(prefix))
    }

    /// Whether `string` ends with `suffix` (false for an empty suffix, as `NSString` answers).
    static func hasSuffix(_ string: String, _ suffix: String, options: ComparisonOptions) -> Bool {
        if suffix.isEmpty { return false }
        return options.fold(string).hasSuffix(options.fold(suffix))
    }

    /// One element of a `LIKE` pattern.
    private enum Glob: Equatable {
        case literal(Character)
        case one
        case any
    }

    /// `LIKE`: `*` matches any run of characters (none included), `?` exactly one, `\` makes the next character
    /// literal. Whole-string, by `Character`. Runs in O(string × pattern) at worst (greedy with one backtrack
    /// point, the star most recently seen), so that no pattern is exponential.
    static func like(_ string: String, _ pattern: String, options: ComparisonOptions) -> Bool {
        let text = Array(options.fold(string))
        var globs: [Glob] = []
        var escaping = false
        for character in options.fold(pattern) {
            if escaping {
                globs.append(.literal(character))
                escaping = false
                continue
            }
            switch character {
            case "\\": escaping = true
            case "*": if globs.last != .any { globs.append(.any) }
            case "?": globs.append(.one)
            default: globs.append(.literal(character))
            }
        }
        if escaping { globs.append(.literal("\\")) }
        var t = 0
        var g = 0
        var starGlob: Int?
        var starText = 0
        while t < text.count {
            if g < globs.count {
                switch globs[g] {
                case .any:
                    starGlob = g
                    starText = t
                    g += 1
                    continue
                case .one:
                    t += 1
                    g += 1
                    continue
                case .literal(let character) where character == text[t]:
                    t += 1
                    g += 1
                    continue
                case .literal: break
                }
            }
            guard let star = starGlob else { return false }
            g = star + 1
            starText += 1
            t = starText
        }
        while g < globs.count, globs[g] == .any { g += 1 }
        return g == globs.count
    }

    /// `MATCHES`: the whole string matches the ICU regular expression. `[c]` compiles it case-insensitively;
    /// `[d]` folds diacritics out of both the string and the pattern.
    static func matches(
        _ string: String, _ pattern: String, options: ComparisonOptions
    ) throws(PredicateEvaluationError) -> Bool {
        let diacritics = options.intersection(.diacriticInsensitive)
        let subject = diacritics.fold(string)
        let regex = try RegexCache.shared.regex(
            diacritics.fold(pattern), caseInsensitive: options.contains(.caseInsensitive), original: pattern)
        let range = NSRange(subject.startIndex..., in: subject)
        return regex.firstMatch(in: subject, options: [], range: range) != nil
    }
}

/// Compiled `MATCHES` patterns, so that a predicate evaluated on many objects compiles its pattern once. Holds at
/// most ``capacity`` patterns and starts afresh when full (patterns are few in practice; a hostile stream of
/// distinct patterns costs a compile each, as without a cache).
final class RegexCache: Sendable {
    static let shared = RegexCache()
    static let capacity = 128

    private struct Key: Hashable {
        var pattern: String
        var caseInsensitive: Bool
    }

    private let entries = Lock<[Key: NSRegularExpression]>([:])

    /// The pattern compiled to match whole strings: `\A(?:pattern)\z`, once the pattern alone has compiled (so
    /// that a stray `)` cannot close the wrapper's group).
    func regex(
        _ pattern: String, caseInsensitive: Bool, original: String
    ) throws(PredicateEvaluationError)
        -> NSRegularExpression
    {
        let key = Key(pattern: pattern, caseInsensitive: caseInsensitive)
        if let cached = entries.withLock({ $0[key] }) { return cached }
        let options: NSRegularExpression.Options = caseInsensitive ? [.caseInsensitive] : []
        guard (try? NSRegularExpression(pattern: pattern, options: options)) != nil,
            let regex = try? NSRegularExpression(pattern: "\\A(?:" + pattern + ")\\z", options: options)
        else { throw .invalidRegularExpression(original) }
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = regex
        }
        return regex
    }
}
