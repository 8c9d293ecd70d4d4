import CLZ4

/// LZ4 block compression through the system's liblz4: the only file that imports CLZ4.
///
/// Blocks carry no length or checksum of their own (the blob record does); decompression uses
/// `LZ4_decompress_safe`, which never reads or writes outside its buffers, into a buffer of exactly the
/// recorded raw length, and anything but exactly that many bytes out is an error.
public enum LZ4Block {
    /// The largest input liblz4 accepts.
    public static let maximumInputSize = Int(LZ4_MAX_INPUT_SIZE)

    /// Compresses `source` at LZ4's default (fastest) level.
    /// - Returns: the compressed bytes, or nil when they would not be smaller than the input.
    public static func compress(_ source: UnsafeRawBufferPointer) -> [UInt8]? {
        precondition(source.count <= maximumInputSize)
        guard source.count > 0 else { return nil }
        let bound = Int(LZ4_compressBound(Int32(source.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let written = output.withUnsafeMutableBytes { destination in
            LZ4_compress_default(
                source.baseAddress!.assumingMemoryBound(to: CChar.self),
                destination.baseAddress!.assumingMemoryBound(to: CChar.self),
                Int32(source.count), Int32(bound))
        }
        guard written > 0, Int(written) < source.count else { return nil }
        output.removeSubrange(Int(written)...)
        return output
    }

    /// Decompresses `source` into `destination`, which must be exactly the recorded raw length.
    ///
    /// - Parameters:
    ///   - source: one LZ4 block, not empty.
    ///   - destination: a buffer of exactly the block's raw length, not empty.
    /// - Throws: ``FormatError/invalidField(_:)`` when the input is malformed or yields another length.
    public static func decompress(
        _ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer
    ) throws(FormatError) {
        guard source.count > 0, source.count <= maximumInputSize, destination.count <= maximumInputSize else {
            throw .invalidField("LZ4 block of \(source.count) bytes for \(destination.count) bytes out is out of range")
        }
        guard destination.count > 0 else { throw .invalidField("LZ4 block for an empty chunk") }
        let result = LZ4_decompress_safe(
            source.baseAddress!.assumingMemoryBound(to: CChar.self),
            destination.baseAddress!.assumingMemoryBound(to: CChar.self),
            Int32(source.count), Int32(destination.count))
        guard result == Int32(destination.count) else {
            throw .invalidField(
                result < 0 ? "malformed LZ4 block" : "LZ4 block yields \(result) bytes, \(destination.count) recorded")
        }
    }
}
