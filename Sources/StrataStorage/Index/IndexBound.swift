import StrataFormat

/// One end of a range scan of a secondary index: a key, or a prefix of one (fewer parts than the index has).
///
/// A prefix bound stands for every key that starts with it: as a lower bound, an inclusive prefix starts
/// the scan at the first such key and an exclusive one after the last; as an upper bound, an inclusive
/// prefix ends the scan after the last such key and an exclusive one before the first. Values compare in
/// the order of the index's key encoding (FORMAT.md, "Index keys"): null first, numbers by value, strings
/// by their UTF-8 bytes.
///
/// For example, every person whose name starts the key "Lovelace", of any age:
/// ```swift
/// let lovelaces = IndexBound([.string("Lovelace")])
/// try snapshot.forEachIndexEntry(in: byNameAndAge, from: lovelaces, through: lovelaces) { entry in ... }
/// ```
public struct IndexBound: Sendable {
    /// The key or prefix.
    public let key: [RowRecord.Field]
    /// Whether keys equal to (or starting with) ``key`` are in the range.
    public let inclusive: Bool

    /// A bound at a key or prefix of at most 16 parts (more is a precondition failure).
    public init(_ key: [RowRecord.Field], inclusive: Bool = true) {
        precondition(key.count <= IndexKey.maximumParts, "an index key has at most 16 parts")
        self.key = key
        self.inclusive = inclusive
    }

    /// The first entry bytes at or after which a scan starts, or nil for no bound.
    var lowerEntryBound: [UInt8]? {
        let prefix = IndexKey.encodePrefix(key)
        if inclusive { return prefix.isEmpty ? nil : prefix }
        // An empty exclusive prefix excludes every key: no entry starts with FF (type bytes are at most 12).
        return IndexKey.prefixSuccessor(prefix) ?? [0xFF]
    }

    /// The entry bytes before which a scan stops, or nil for no bound.
    var upperEntryBound: [UInt8]? {
        let prefix = IndexKey.encodePrefix(key)
        if inclusive { return IndexKey.prefixSuccessor(prefix) }
        return prefix
    }
}
