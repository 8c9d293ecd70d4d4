/// A failed file-system operation: what was attempted, on which path, and the system's reason.
public struct IOError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The system's reason, as a portable code.
    public var code: Code
    /// The operation that failed, e.g. `"write"`, `"fdatasync"`, `"rename"`.
    public var operation: String
    /// The path the operation was about.
    public var path: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The reason the operation failed.
    ///   - operation: The operation that failed, e.g. `"write"`.
    ///   - path: The path the operation was about.
    public init(_ code: Code, operation: String, path: String) {
        self.code = code
        self.operation = operation
        self.path = path
    }

    /// The operation, the path and the reason, e.g. `rename /db/a: no such file or directory`.
    public var description: String { "\(operation) \(path): \(code)" }

    /// Portable reasons a file operation fails; raw C error numbers never appear in the API.
    public enum Code: Sendable, Equatable, CustomStringConvertible {
        /// The file or a directory on its path does not exist (`ENOENT`).
        case noSuchFile
        /// The file exists and the operation required that it did not (`EEXIST`).
        case fileExists
        /// The process may not access the file (`EACCES`, `EPERM`).
        case permissionDenied
        /// The device or the user's quota is full (`ENOSPC`, `EDQUOT`).
        case noSpace
        /// The device failed to read or write (`EIO`).
        case ioFailure
        /// A lock is held by another holder (`EWOULDBLOCK`).
        case wouldBlock
        /// A component of the path, or the path itself, is not a directory (`ENOTDIR`).
        case notADirectory
        /// The path names a directory where a file was expected (`EISDIR`).
        case isADirectory
        /// The file system is mounted read-only (`EROFS`).
        case readOnlyFileSystem
        /// The process or the system has too many open files (`EMFILE`, `ENFILE`).
        case tooManyOpenFiles
        /// Any other system error, with its number (for logs only).
        case other(Int32)

        /// A short human-readable reason, like `strerror`'s.
        public var description: String {
            switch self {
            case .noSuchFile: "no such file or directory"
            case .fileExists: "file exists"
            case .permissionDenied: "permission denied"
            case .noSpace: "no space left on device"
            case .ioFailure: "input/output error"
            case .wouldBlock: "resource is locked"
            case .notADirectory: "not a directory"
            case .isADirectory: "is a directory"
            case .readOnlyFileSystem: "read-only file system"
            case .tooManyOpenFiles: "too many open files"
            case .other(let number): Self.systemMessage(number)
            }
        }
    }
}
