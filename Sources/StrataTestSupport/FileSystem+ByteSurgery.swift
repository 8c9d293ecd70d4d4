import StrataFormat
import StrataIO

/// Byte surgery on the files of a store, for corruption and torn-write tests (LevelDB's `IncrementByte`,
/// `ShrinkSize`, `FixChecksum`). Every change is written and synced through the seam, so it also holds
/// for ``InMemoryFileSystem/crashImage(policy:)``.
extension FileSystem {
    /// The whole contents of the file at `path`.
    ///
    /// - Throws: the ``IOError`` of the first operation that fails (`.noSuchFile` for a missing file).
    public func contentsOfFile(at path: String) throws -> [UInt8] {
        let file = try openFile(at: path, mode: .existing)
        defer { try? file.close() }
        return try file.read(count: Int(try file.size()), at: 0)
    }

    /// Replaces the whole contents of the file at `path` (created if missing), synced.
    ///
    /// - Throws: the ``IOError`` of the first operation that fails.
    public func replaceContentsOfFile(at path: String, with bytes: [UInt8]) throws {
        let file = try openFile(at: path, mode: .truncate)
        defer { try? file.close() }
        try file.write(bytes, at: 0)
        try file.sync()
    }

    /// XORs the byte at `offset` of the file at `path` with `mask` (all bits by default), synced.
    ///
    /// A zero mask or an offset at or past the end of the file is a precondition failure.
    ///
    /// - Throws: the ``IOError`` of the first operation that fails (`.noSuchFile` for a missing file).
    public func flipByte(at offset: UInt64, in path: String, mask: UInt8 = 0xFF) throws {
        precondition(mask != 0, "a zero mask changes nothing")
        let file = try openFile(at: path, mode: .existing)
        defer { try? file.close() }
        let old = try file.read(count: 1, at: offset)
        precondition(old.count == 1, "offset \(offset) is past the end of \(path)")
        try file.write([old[0] ^ mask], at: offset)
        try file.sync()
    }

    /// Cuts `count` bytes off the end of the file at `path`, synced. Cutting more than the file holds is a
    /// precondition failure.
    ///
    /// - Throws: the ``IOError`` of the first operation that fails (`.noSuchFile` for a missing file).
    public func truncate(path: String, by count: UInt64) throws {
        let file = try openFile(at: path, mode: .existing)
        defer { try? file.close() }
        let size = try file.size()
        precondition(count <= size, "cannot cut \(count) bytes off a file of \(size)")
        try file.truncate(to: size - count)
        try file.sync()
    }

    /// Sets the size of the file at `path` to `size` bytes.
    ///
    /// - Throws: the ``IOError`` of the first operation that fails (`.noSuchFile` for a missing file).
    public func truncate(path: String, to size: UInt64) throws {
        let file = try openFile(at: path, mode: .existing)
        defer { try? file.close() }
        try file.truncate(to: size)
        try file.sync()
    }

    /// The size of the file at `path`.
    ///
    /// - Throws: the ``IOError`` of the first operation that fails (`.noSuchFile` for a missing file).
    public func sizeOfFile(at path: String) throws -> UInt64 {
        let file = try openFile(at: path, mode: .existing)
        defer { try? file.close() }
        return try file.size()
    }
}
