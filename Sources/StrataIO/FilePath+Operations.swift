import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Path operations that swift-system 1.8.1 does not wrap, in its own style.
// They are internal: only StrataIO makes system calls.

extension FilePath {
    /// Atomically renames the file at this path, replacing any file at `destination`.
    ///
    /// The new name survives power loss only after the directories of both names are synced
    /// (see ``FileDescriptor/sync(retryOnInterrupt:)``).
    ///
    /// - Parameters:
    ///   - destination: The new path of the file.
    ///   - retryOnInterrupt: Whether to retry the operation
    ///     if it throws ``Errno/interrupted``.
    ///     The default is `true`.
    ///     Pass `false` to try only once and throw an error upon interruption.
    /// - Throws: The system's `Errno`, e.g. ``Errno/noSuchFileOrDirectory``.
    ///
    /// The corresponding C function is `rename`.
    func rename(to destination: FilePath, retryOnInterrupt: Bool = true) throws(Errno) {
        _ = try Errno.result(retryOnInterrupt: retryOnInterrupt) {
            self.withCString { source in
                destination.withCString { destination in
                    #if canImport(Glibc)
                    Glibc.rename(source, destination)
                    #elseif canImport(Musl)
                    Musl.rename(source, destination)
                    #else
                    Darwin.rename(source, destination)
                    #endif
                }
            }
        }
    }

    /// Removes the empty directory at this path.
    ///
    /// - Parameters:
    ///   - retryOnInterrupt: Whether to retry the operation
    ///     if it throws ``Errno/interrupted``.
    ///     The default is `true`.
    ///     Pass `false` to try only once and throw an error upon interruption.
    /// - Throws: The system's `Errno`, e.g. ``Errno/noSuchFileOrDirectory`` or ``Errno/directoryNotEmpty``.
    ///
    /// The corresponding C function is `rmdir`.
    func removeDirectory(retryOnInterrupt: Bool = true) throws(Errno) {
        _ = try Errno.result(retryOnInterrupt: retryOnInterrupt) {
            self.withCString { path in
                #if canImport(Glibc)
                Glibc.rmdir(path)
                #elseif canImport(Musl)
                Musl.rmdir(path)
                #else
                Darwin.rmdir(path)
                #endif
            }
        }
    }

    /// Removes the directory entry at this path; the file goes away when no descriptor refers to it.
    ///
    /// - Parameters:
    ///   - retryOnInterrupt: Whether to retry the operation
    ///     if it throws ``Errno/interrupted``.
    ///     The default is `true`.
    ///     Pass `false` to try only once and throw an error upon interruption.
    /// - Throws: The system's `Errno`, e.g. ``Errno/noSuchFileOrDirectory``, or
    ///   ``Errno/isDirectory`` when the path names a directory.
    ///
    /// The corresponding C function is `unlink`.
    func unlink(retryOnInterrupt: Bool = true) throws(Errno) {
        _ = try Errno.result(retryOnInterrupt: retryOnInterrupt) {
            self.withCString { path in
                #if canImport(Glibc)
                Glibc.unlink(path)
                #elseif canImport(Musl)
                Musl.unlink(path)
                #else
                Darwin.unlink(path)
                #endif
            }
        }
    }

    /// Creates a directory at this path; its parent must exist.
    ///
    /// - Parameters:
    ///   - permissions: The permissions of the new directory, before the process's umask.
    ///   - retryOnInterrupt: Whether to retry the operation
    ///     if it throws ``Errno/interrupted``.
    ///     The default is `true`.
    ///     Pass `false` to try only once and throw an error upon interruption.
    /// - Throws: The system's `Errno`, e.g. ``Errno/fileExists`` or ``Errno/noSuchFileOrDirectory``.
    ///
    /// The corresponding C function is `mkdir`.
    func makeDirectory(permissions: FilePermissions, retryOnInterrupt: Bool = true) throws(Errno) {
        _ = try Errno.result(retryOnInterrupt: retryOnInterrupt) {
            self.withCString { path in mkdir(path, permissions.rawValue) }
        }
    }

    /// The names of the entries of the directory at this path, without `.` and `..`, in the
    /// order the file system returns them.
    ///
    /// - Throws: The system's `Errno`, e.g. ``Errno/noSuchFileOrDirectory`` or ``Errno/notDirectory``.
    ///
    /// The corresponding C functions are `opendir`, `readdir` and `closedir`.
    func directoryEntryNames() throws(Errno) -> [String] {
        guard let directory = self.withCString({ opendir($0) }) else { throw Errno.current }
        defer { closedir(directory) }
        var names: [String] = []
        while true {
            // readdir returns nil both at the end and on failure; only errno tells them apart.
            errno = 0
            guard let entry = readdir(directory) else {
                if errno != 0 { throw Errno.current }
                return names
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
    }
}
