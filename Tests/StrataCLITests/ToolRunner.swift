import Foundation
import StrataFormat
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs `strata` (or a shell around it) as a subprocess with a deadline, and the file surgery and file
/// listings the operational tests share.
enum ToolRunner {
    /// What one run did.
    struct Outcome: CustomStringConvertible {
        var status: Int32
        /// Whether it ended by a signal (then `status` is the signal's number).
        var signaled: Bool
        /// Whether it was killed for running past the deadline.
        var timedOut: Bool
        var standardOutput: String
        var standardError: String
        var seconds: Double

        var description: String {
            "\(timedOut ? "TIMED OUT " : "")\(signaled ? "signal" : "exit") \(status) in "
                + String(format: "%.2f s", seconds)
                + "\nstdout: \(standardOutput.prefix(2000))\nstderr: \(standardError.prefix(2000))"
        }

        /// The standard output as one JSON object.
        func json() throws -> [String: Any] {
            let object = try JSONSerialization.jsonObject(with: Data(standardOutput.utf8))
            return try #require(object as? [String: Any], "not a JSON object: \(standardOutput.prefix(500))")
        }

        /// The standard output as JSON Lines: every line one JSON object.
        func jsonLines() throws -> [[String: Any]] {
            try standardOutput.split(separator: "\n").map { line in
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
                return try #require(object as? [String: Any], "not a JSON object: \(line.prefix(500))")
            }
        }
    }

    /// Runs `executable` with `arguments`, killing it after `timeout` seconds.
    static func run(_ executable: String, _ arguments: [String], timeout: Double = 60) throws -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("strata-run-\(UUID().uuidString)")
        let out = scratch.appendingPathExtension("out")
        let err = scratch.appendingPathExtension("err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        let clock = ContinuousClock()
        let start = clock.now
        try process.run()
        var timedOut = false
        while process.isRunning {
            if clock.now - start > .seconds(timeout) {
                timedOut = true
                kill(process.processIdentifier, SIGKILL)
                break
            }
            usleep(2_000)
        }
        process.waitUntilExit()
        let elapsed = clock.now - start
        return Outcome(
            status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal,
            timedOut: timedOut, standardOutput: String(decoding: try Data(contentsOf: out), as: UTF8.self),
            standardError: String(decoding: try Data(contentsOf: err), as: UTF8.self),
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
    }

    /// Runs the built `strata` with `arguments`.
    static func strata(_ arguments: String..., timeout: Double = 60) throws -> Outcome {
        try run(try StrataToolTests.locateTool(), arguments, timeout: timeout)
    }

    /// Runs `script` with `/bin/sh -c`, `$0` being the `strata` binary and `$1`... `arguments`.
    static func shell(_ script: String, _ arguments: String..., timeout: Double = 60) throws -> Outcome {
        try run("/bin/sh", ["-c", script, try StrataToolTests.locateTool()] + arguments, timeout: timeout)
    }

    // MARK: - Files

    /// One file of a listing: what must not change when a command only reads.
    struct Entry: Equatable, CustomStringConvertible {
        var name: String
        var size: UInt64
        var inode: UInt64
        var modified: Int
        var modifiedNanoseconds: Int
        var changed: Int
        var changedNanoseconds: Int
        var mode: UInt32
        var digest: UInt32

        var description: String {
            "\(name) size \(size) inode \(inode) mtime \(modified).\(modifiedNanoseconds) mode \(mode)"
        }
    }

    /// Every entry of `directory` (not following links), with its size, inode, modification and status-change
    /// times, mode and a checksum of its bytes: a listing that a write, a new file, a rename or a `chmod`
    /// changes even when the writer is root.
    static func listing(_ directory: String) throws -> [Entry] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted().map { name in
            let path = directory + "/" + name
            var status = stat()
            guard lstat(path, &status) == 0 else { throw CocoaError(.fileReadNoPermission) }
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
            return Entry(
                name: name, size: UInt64(status.st_size), inode: UInt64(status.st_ino),
                modified: Int(status.st_mtim.tv_sec), modifiedNanoseconds: Int(status.st_mtim.tv_nsec),
                changed: Int(status.st_ctim.tv_sec), changedNanoseconds: Int(status.st_ctim.tv_nsec),
                mode: UInt32(status.st_mode), digest: CRC32C.checksum([UInt8](bytes)))
        }
    }

    /// Sets the mode of `path`.
    static func chmod(_ path: String, _ mode: Int) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    /// Replaces `count` bytes at `offset` of the file at `path` by `bytes` (repeated as needed).
    static func overwrite(_ path: String, at offset: UInt64, with bytes: [UInt8]) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: Data(bytes))
    }

    /// The bytes of the file at `path`.
    static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Seals page `number` of the page file at `path` again after its bytes were edited (its checksum,
    /// FORMAT.md §4.1: masked CRC of the store's salt then bytes 4..<pageSize), so that only structural checks
    /// can reject it.
    static func resealPage(_ number: UInt64, in path: String) throws {
        var file = try bytes(path)
        let header = try file.withUnsafeBytes { buffer in
            try Result { () throws(FormatError) in try StoreHeader.decode(buffer) }.get()
        }
        let start = Int(number) * header.pageSize
        let crc = CRC32C.checksum(
            Array(file[(start + 4)..<(start + header.pageSize)]), continuing: CRC32C.checksum(of: header.checksumSalt))
        let masked = CRC32C.mask(crc)
        for index in 0..<4 { file[start + index] = UInt8(truncatingIfNeeded: masked >> (8 * UInt32(index))) }
        try Data(file).write(to: URL(fileURLWithPath: path))
    }

    /// Rewrites the store header (page 0) of the page file at `path` with `change` applied, checksum included.
    static func editHeader(_ path: String, _ change: (inout StoreHeader) -> Void) throws {
        var file = try bytes(path)
        var header = try file.withUnsafeBytes { buffer in
            try Result { () throws(FormatError) in try StoreHeader.decode(buffer) }.get()
        }
        change(&header)
        file.replaceSubrange(0..<StoreHeader.encodedSize, with: header.encoded())
        try Data(file).write(to: URL(fileURLWithPath: path))
    }

    /// The offset of the last occurrence of `needle` in the file at `path` (in a page file: the newest copy).
    static func findLast(_ needle: String, in path: String) throws -> Int {
        let haystack = try bytes(path)
        let pattern = Array(needle.utf8)
        for start in stride(from: haystack.count - pattern.count, through: 0, by: -1)
        where haystack[start..<(start + pattern.count)].elementsEqual(pattern) {
            return start
        }
        throw CocoaError(.fileReadCorruptFile)
    }
}
