import Foundation
import StrataIO
import Testing

/// The FileSystem implementations that must behave alike; conformance tests run against each.
enum FileSystemKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case posix
    case inMemory

    var testDescription: String { rawValue }

    /// Runs `body` with a fresh file system of this kind and an empty directory in it, removed
    /// afterwards (a unique directory under the system's temporary directory for POSIX).
    func withFileSystem<R>(_ body: (any FileSystem, TestDirectory) async throws -> R) async throws -> R {
        switch self {
        case .posix:
            let root = FileManager.default.temporaryDirectory
                .appendingPathComponent("strata-io-tests-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
            defer { try? FileManager.default.removeItem(atPath: root) }
            return try await body(PosixFileSystem(), TestDirectory(root: root))
        case .inMemory:
            let fileSystem = InMemoryFileSystem()
            try fileSystem.createDirectory(at: "/test")
            return try await body(fileSystem, TestDirectory(root: "/test"))
        }
    }
}

/// A directory that a test owns: paths inside it by name.
struct TestDirectory: Sendable {
    /// The directory's path.
    let root: String

    /// The path of `name` (which may contain `/`) inside the directory.
    func path(_ name: String) -> String { root + "/" + name }
}

/// Checks that `body` throws an ``IOError`` with `code`.
func expectIOError<R>(
    _ code: IOError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws(IOError) -> R
) {
    do {
        _ = try body()
        Issue.record("expected IOError \(code), but the operation succeeded", sourceLocation: sourceLocation)
    } catch {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    }
}

extension Array where Element == UInt8 {
    /// The UTF-8 bytes of `text`.
    init(_ text: String) { self = Array(text.utf8) }
}
