import SystemPackage

// The one place where system error numbers become portable `IOError.Code`s.

extension IOError.Code {
    /// The portable code for a system error.
    ///
    /// Several numbers share a code where callers cannot act differently on them:
    /// `EACCES` and `EPERM` are both `.permissionDenied`, `ENOSPC` and `EDQUOT` are both
    /// `.noSpace`, `EMFILE` and `ENFILE` are both `.tooManyOpenFiles`.
    init(_ errno: Errno) {
        switch errno {
        case .noSuchFileOrDirectory: self = .noSuchFile
        case .fileExists: self = .fileExists
        case .permissionDenied, .notPermitted: self = .permissionDenied
        case .noSpace, .diskQuotaExceeded: self = .noSpace
        case .ioError: self = .ioFailure
        // EWOULDBLOCK is EAGAIN on Linux and Darwin.
        case .wouldBlock, .resourceTemporarilyUnavailable: self = .wouldBlock
        case .notDirectory: self = .notADirectory
        case .isDirectory: self = .isADirectory
        case .readOnlyFileSystem: self = .readOnlyFileSystem
        case .tooManyOpenFiles, .tooManyOpenFilesInSystem: self = .tooManyOpenFiles
        default: self = .other(errno.rawValue)
        }
    }
}

extension IOError.Code {
    /// The system's message for an error number (`strerror`'s, lower-cased first letter, as the other codes'
    /// descriptions), e.g. `file too large` for `EFBIG`; the number itself is kept for logs.
    static func systemMessage(_ number: Int32) -> String {
        let message = Errno(rawValue: number).description
        guard let first = message.first, !message.isEmpty else { return "system error \(number)" }
        return first.lowercased() + message.dropFirst() + " (errno \(number))"
    }
}

extension IOError {
    /// An error for a failed system call.
    ///
    /// `EBADF` and `EFAULT` mean that StrataIO itself passed a closed descriptor or a bad
    /// pointer: they are programmer errors, so they trap here instead of surfacing as errors that
    /// a caller might retry or report as a disk problem (NIO's `preconditionIsNotUnacceptableErrno`).
    ///
    /// - Parameters:
    ///   - errno: The system's error.
    ///   - operation: The C function that failed, e.g. `"pwrite"`, `"fdatasync"`.
    ///   - path: The path the operation was about.
    init(errno: Errno, operation: String, path: String) {
        precondition(
            errno != .badFileDescriptor && errno != .badAddress,
            "\(operation) \(path) failed with \(errno): a descriptor or buffer misuse in StrataIO"
        )
        self.init(Code(errno), operation: operation, path: path)
    }
}

extension IOError {
    /// Runs a swift-system call, turning the `Errno` it throws into an `IOError`.
    ///
    /// swift-system's older entry points (`open`, `read`, `write`, `close`, `resize`) throw untyped
    /// errors that are always `Errno`; this is where they become typed.
    ///
    /// - Parameters:
    ///   - operation: The C function being called, for the error's context.
    ///   - path: The path the call is about, for the error's context.
    ///   - body: The call.
    /// - Returns: What `body` returns.
    /// - Throws: ``IOError`` built from the `Errno` that `body` threw.
    @inline(__always)
    static func catching<T>(
        _ operation: String,
        path: String,
        _ body: () throws -> T
    ) throws(IOError) -> T {
        do {
            return try body()
        } catch let errno as Errno {
            throw IOError(errno: errno, operation: operation, path: path)
        } catch {
            preconditionFailure("\(operation) \(path): swift-system threw a non-Errno error \(error)")
        }
    }
}
