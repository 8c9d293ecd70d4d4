extension InMemoryFileSystem {
    /// One successful operation of an ``InMemoryFileSystem`` that could change what a crash leaves,
    /// in the order it happened.
    ///
    /// Reads, size queries and closes are not events. Failed operations are not events.
    /// Paths are as the caller spelled them.
    public enum Event: Sendable, Equatable, Hashable {
        /// A file was opened (and maybe created or truncated).
        case open(path: String, mode: FileOpenMode)
        /// `count` bytes were written at `offset` through a handle opened as `path`.
        case write(path: String, offset: UInt64, count: Int)
        /// The size was set through a handle opened as `path`.
        case truncate(path: String, size: UInt64)
        /// A file's contents were made durable through a handle opened as `path`.
        case sync(path: String)
        /// A directory (and its missing parents) was created.
        case createDirectory(path: String)
        /// A file's name was removed.
        case removeFile(path: String)
        /// A file was renamed.
        case rename(from: String, to: String)
        /// A directory's entries were made durable.
        case syncDirectory(path: String)
        /// A lock was taken (creating the lock file if missing).
        case lock(path: String)
        /// A lock was released.
        case unlock(path: String)
        /// A test replaced a file's contents with ``InMemoryFileSystem/setContents(_:of:)``.
        case setContents(path: String)
    }
}
