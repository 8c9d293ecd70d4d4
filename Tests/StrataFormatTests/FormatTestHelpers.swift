import StrataFormat
import StrataTestSupport
import Testing

/// Calls `decode` on `bytes` and returns its error, or nil when it decoded; fails the test if it throws
/// anything but a ``FormatError`` (the decoders' typed throws make that impossible today; this pins it,
/// since closures passed here infer untyped throws).
func formatError<T>(
    _ bytes: [UInt8],
    sourceLocation: SourceLocation = #_sourceLocation,
    _ decode: (UnsafeRawBufferPointer) throws -> T
) -> FormatError? {
    do {
        _ = try bytes.withUnsafeBytes { try decode($0) }
        return nil
    } catch let error as FormatError {
        return error
    } catch {
        Issue.record("a decoder threw \(type(of: error)) \(error), not a FormatError", sourceLocation: sourceLocation)
        return .invalidField("untyped error")
    }
}

/// Whether an error is a truncation.
func isTruncated(_ error: FormatError?) -> Bool {
    if case .truncated = error { return true }
    return false
}

/// Whether an error is a checksum mismatch.
func isChecksumMismatch(_ error: FormatError?) -> Bool {
    if case .checksumMismatch = error { return true }
    return false
}

/// Whether an error is an invalid field.
func isInvalidField(_ error: FormatError?) -> Bool {
    if case .invalidField = error { return true }
    return false
}

/// Page-level surgery: recomputes the checksum of a page after a test edited it, so that the structural
/// checks behind the checksum are what must reject the edit (LevelDB's `FixChecksum`).
func resealPage(_ page: inout [UInt8], salt: UInt64) {
    let crc = page.withUnsafeBytes { all in
        CRC32C.checksum(UnsafeRawBufferPointer(rebasing: all[4...]), continuing: CRC32C.checksum(of: salt))
    }
    storeLE(CRC32C.mask(crc), at: 0, in: &page)
}

/// Stores a little-endian integer into a byte array.
func storeLE<T: FixedWidthInteger>(_ value: T, at offset: Int, in bytes: inout [UInt8]) {
    for index in 0..<MemoryLayout<T>.size {
        bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index))
    }
}

/// Loads a little-endian integer from a byte array.
func loadLE<T: FixedWidthInteger>(_ type: T.Type, at offset: Int, in bytes: [UInt8]) -> T {
    var value: T = 0
    for index in 0..<MemoryLayout<T>.size { value |= T(bytes[offset + index]) << (8 * index) }
    return value
}

/// A zeroed page of `size` bytes filled by `encode`.
func makePage(size: Int, _ encode: (UnsafeMutableRawBufferPointer) -> Void) -> [UInt8] {
    var page = [UInt8](repeating: 0, count: size)
    page.withUnsafeMutableBytes { encode($0) }
    return page
}

/// Decodes a page header and then the body with `body`, as the engine does.
func decodePage<T>(
    _ page: [UInt8],
    number: UInt64,
    salt: UInt64,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (UnsafeRawBufferPointer, PageHeader) throws -> T
) -> Result<T, FormatError> {
    do {
        return .success(
            try page.withUnsafeBytes { buffer in
                let header = try PageHeader.decode(buffer, expectedPageNumber: number, salt: salt)
                return try body(buffer, header)
            }
        )
    } catch let error as FormatError {
        return .failure(error)
    } catch {
        Issue.record("a decoder threw \(type(of: error)) \(error), not a FormatError", sourceLocation: sourceLocation)
        return .failure(.invalidField("untyped error"))
    }
}

/// Applies `mutations` random byte changes to copies of `bytes` (1 to 4 bytes each, resealed with
/// `reseal` when given) and decodes each: every outcome must be a value or a FormatError, never a trap.
/// - Returns: how many of the mutated inputs were rejected.
@discardableResult
func mutateAndDecode<T>(
    _ bytes: [UInt8],
    seed: UInt64,
    mutations: Int,
    region: Range<Int>? = nil,
    reseal: ((inout [UInt8]) -> Void)? = nil,
    _ decode: (UnsafeRawBufferPointer) throws -> T
) -> Int {
    var random = RepeatableRandomNumberGenerator(seed: seed)
    let region = region ?? 0..<bytes.count
    var rejected = 0
    for _ in 0..<mutations {
        var copy = bytes
        // Mutations that happen to restore the original bytes are drawn again: every input differs.
        while copy == bytes {
            mutate(&copy, in: region, using: &random)
        }
        reseal?(&copy)
        if formatError(copy, decode) != nil { rejected += 1 }
    }
    return rejected
}

/// Changes 1 to 4 random bytes of `bytes` within `region`: single-bit flips, random bytes, or boundary values.
private func mutate(_ bytes: inout [UInt8], in region: Range<Int>, using random: inout RepeatableRandomNumberGenerator)
{
    for _ in 0..<Int.random(in: 1...4, using: &random) {
        let index = Int.random(in: region, using: &random)
        switch Int.random(in: 0..<3, using: &random) {
        case 0: bytes[index] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
        case 1: bytes[index] = UInt8.random(in: 0...255, using: &random)
        default: bytes[index] = [0x00, 0xFF, 0x7F, 0x80].randomElement(using: &random)!
        }
    }
}
