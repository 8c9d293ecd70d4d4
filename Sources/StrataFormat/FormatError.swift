/// Why bytes read from disk (or from any untrusted source) could not be decoded.
///
/// Decoders in StrataFormat never trap on bad input: every length, offset and count is checked
/// before use and a failure is one of these cases. The storage layer adds the file and offset.
public enum FormatError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input ended before a field: `needed` bytes were required, `available` remained.
    case truncated(needed: Int, available: Int)
    /// A stored checksum does not match the bytes it covers.
    case checksumMismatch(stored: UInt32, computed: UInt32)
    /// The magic bytes that open a file are wrong: this is not a Strata file of that kind.
    case badMagic
    /// The file was written by a format version this code does not read.
    case unsupportedVersion(UInt32)
    /// A field holds a value the format does not allow; the string says which and why.
    case invalidField(String)

    /// A one-line description of the failure, e.g. `truncated: needed 8 bytes, 3 available`.
    public var description: String {
        switch self {
        case .truncated(let needed, let available):
            "truncated: needed \(needed) bytes, \(available) available"
        case .checksumMismatch(let stored, let computed):
            "checksum mismatch: stored 0x\(String(stored, radix: 16)), computed 0x\(String(computed, radix: 16))"
        case .badMagic: "bad magic bytes"
        case .unsupportedVersion(let version): "unsupported format version \(version)"
        case .invalidField(let reason): reason
        }
    }

    static func invalid(_ reason: String) -> FormatError { .invalidField(reason) }
}
