// The whole in-memory file system: a tree of nodes with two namespaces per directory (current and
// durable) and two contents per file (current and durable). Every access happens under the
// `Lock` of the owning `InMemoryFileSystem`; nothing here synchronizes on its own.
//
// Durability model (LevelDB's fault-injection Env, Pebble's vfs.MemFS CrashClone):
// 1. A file's contents become durable when a handle on it is synced. Names do not matter: a sync
//    through a handle opened as `a` still covers the file after it was renamed to `b`.
// 2. A directory's entries (creations, renames, removals of the names in it) become durable when
//    that directory is synced. A rename touches two directories when it moves a file between them.
// 3. After power loss, the file system is the durable namespace, walked from the root, with each
//    reachable file's durable contents. A file whose name was never made durable is gone; a name
//    that was removed or renamed away without a directory sync is back.

extension InMemoryFileSystem {
    /// Identity of a file or directory, independent of its names (an inode number).
    typealias NodeID = Int

    /// All files, directories, open handles and locks of one in-memory file system.
    struct State {
        /// The root directory, which always exists and is never removed.
        static let rootID: NodeID = 0

        /// Regular files by identity.
        var files: [NodeID: File] = [:]
        /// Directories by identity, the root included.
        var directories: [NodeID: Directory] = [Self.rootID: Directory()]
        /// The next identity to hand out.
        var nextID: NodeID = Self.rootID + 1
        /// How many open handles and held locks refer to each node; such nodes outlive their names.
        var openCounts: [NodeID: Int] = [:]
        /// Files on which locks are held: how many shared holders, or -1 for an exclusive one.
        var locks: [NodeID: Int] = [:]
        /// The locks held through open handles (``InMemoryFileHandle/lock(_:waiting:)``), by handle, counted in
        /// ``locks`` too.
        var handleLocks: [ObjectIdentifier: FileLockMode] = [:]
        /// Successful operations so far that could change what a crash leaves (see ``Event``).
        var operationCount = 0
        /// The operations so far, when recording; `nil` when not.
        var events: [Event]?
        /// Node count at which the next garbage collection runs.
        private var collectionThreshold = 64

        /// An empty file system: just the root directory.
        init(recordsEvents: Bool) {
            events = recordsEvents ? [] : nil
        }

        // MARK: - Nodes

        /// A regular file.
        struct File {
            /// What reads see now.
            var contents: [UInt8] = []
            /// What survives power loss: the contents at the last sync.
            var durableContents: [UInt8] = []
            /// The writes and truncations since the last sync, in order, so that a crash policy can
            /// replay a prefix of them. Applying them all to `durableContents` gives `contents`.
            var unsyncedChanges: [Change] = []

            /// One write or truncation not yet covered by a sync.
            enum Change {
                /// `bytes` written at `offset`.
                case write(offset: Int, bytes: [UInt8])
                /// The size set to `size`.
                case truncate(size: Int)
            }

            /// A file whose current and durable contents are both `bytes`.
            init(bytes: [UInt8] = []) {
                contents = bytes
                durableContents = bytes
            }

            /// Writes `bytes` at `offset`, zero-filling any gap past the end, and records the change.
            mutating func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
                guard !bytes.isEmpty else { return }
                Self.apply(bytes, at: offset, to: &contents)
                // One memcpy; `Array(bytes)` would go element by element in unoptimized test builds.
                let copy = [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, initialized in
                    UnsafeMutableRawBufferPointer(buffer).copyMemory(from: bytes)
                    initialized = bytes.count
                }
                unsyncedChanges.append(.write(offset: offset, bytes: copy))
            }

            /// Sets the size, dropping bytes or zero-extending, and records the change.
            mutating func truncate(to size: Int) {
                Self.resize(&contents, to: size)
                unsyncedChanges.append(.truncate(size: size))
            }

            /// Makes the current contents durable.
            mutating func sync() {
                durableContents = contents
                unsyncedChanges.removeAll()
            }

            /// Writes `bytes` at `offset` of `target`, zero-filling any gap past its end.
            ///
            /// Appends (the common case) copy straight onto the end, so the array grows geometrically
            /// and no byte is written twice.
            static func apply(_ bytes: UnsafeRawBufferPointer, at offset: Int, to target: inout [UInt8]) {
                if target.count < offset { resize(&target, to: offset) }
                // 0 <= offset <= target.count here, so the overlap is within both buffers.
                let overlap = min(bytes.count, target.count - offset)
                if overlap > 0 {
                    target.withUnsafeMutableBytes { storage in
                        UnsafeMutableRawBufferPointer(rebasing: storage[offset..<(offset + overlap)])
                            .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[..<overlap]))
                    }
                }
                if overlap < bytes.count {
                    target.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[overlap...]))
                }
            }

            /// Sets the size of `target`, dropping bytes or zero-extending.
            static func resize(_ target: inout [UInt8], to size: Int) {
                if size < target.count {
                    target.removeSubrange(size...)
                } else if size > target.count {
                    target.append(contentsOf: [UInt8](repeating: 0, count: size - target.count))
                }
            }
        }

        /// A directory: names to nodes, now and as of its last sync.
        struct Directory {
            /// The names visible now.
            var entries: [String: NodeID] = [:]
            /// The names that survive power loss: the entries at the last sync of this directory.
            var durableEntries: [String: NodeID] = [:]
        }

        // MARK: - Paths

        /// Where a path leads: its parent directory and last name, or the root.
        enum Location {
            /// The root directory (`"/"`).
            case root
            /// The entry `name` in the directory `parent` (which may or may not exist).
            case entry(parent: NodeID, name: String)
        }

        /// The names along `path`, with `.` dropped and `..` applied lexically. Absolute and relative
        /// paths both start at the root.
        static func components(of path: String) -> [String] {
            var names: [String] = []
            for part in path.split(separator: "/", omittingEmptySubsequences: true) {
                if part == "." { continue }
                if part == ".." {
                    if !names.isEmpty { names.removeLast() }
                    continue
                }
                names.append(String(part))
            }
            return names
        }

        /// Resolves every directory along `path` but the last name.
        ///
        /// - Throws: `.noSuchFile` for an empty path or a missing directory on the way,
        ///   `.notADirectory` for a file on the way.
        func locate(_ path: String, operation: String) throws(IOError) -> Location {
            guard !path.isEmpty else { throw IOError(.noSuchFile, operation: operation, path: path) }
            let names = Self.components(of: path)
            guard let last = names.last else { return .root }
            var directory = Self.rootID
            for name in names.dropLast() {
                guard let child = directories[directory]!.entries[name] else {
                    throw IOError(.noSuchFile, operation: operation, path: path)
                }
                guard directories[child] != nil else {
                    throw IOError(.notADirectory, operation: operation, path: path)
                }
                directory = child
            }
            return .entry(parent: directory, name: last)
        }

        /// The node at `path` now, or `nil` if there is none.
        func node(at path: String, operation: String) throws(IOError) -> NodeID? {
            switch try locate(path, operation: operation) {
            case .root: Self.rootID
            case .entry(let parent, let name): directories[parent]!.entries[name]
            }
        }

        /// The directory at `path`.
        ///
        /// - Throws: `.noSuchFile` when it is missing, `.notADirectory` when it is a file.
        func directory(at path: String, operation: String) throws(IOError) -> NodeID {
            guard let id = try node(at: path, operation: operation) else {
                throw IOError(.noSuchFile, operation: operation, path: path)
            }
            guard directories[id] != nil else { throw IOError(.notADirectory, operation: operation, path: path) }
            return id
        }

        /// The regular file at `path`, or `nil` when nothing (or a directory) is there.
        func fileIfPresent(at path: String) -> NodeID? {
            guard let id = try? node(at: path, operation: "lookup"), files[id] != nil else { return nil }
            return id
        }

        /// `offset + count` as an index into a file's bytes.
        static func end(of offset: UInt64, count: Int) -> Int {
            // count is a buffer's count, so 0 <= count <= Int.max.
            let (end, overflow) = offset.addingReportingOverflow(UInt64(count))
            precondition(!overflow && end <= UInt64(Int.max), "file offset \(offset) + \(count) exceeds Int.max")
            return Int(end)
        }

        // MARK: - Namespace operations

        /// Counts an operation and records it when recording.
        mutating func record(_ event: @autoclosure () -> Event) {
            operationCount += 1
            if events != nil { events!.append(event()) }
        }

        /// Opens (and per `mode` creates or truncates) the file at `path`, counting the new handle.
        mutating func openFile(at path: String, mode: FileOpenMode) throws(IOError) -> NodeID {
            let operation = "open"
            guard case .entry(let parent, let name) = try locate(path, operation: operation) else {
                throw IOError(.isADirectory, operation: operation, path: path)
            }
            let id: NodeID
            if let existing = directories[parent]!.entries[name] {
                guard files[existing] != nil else { throw IOError(.isADirectory, operation: operation, path: path) }
                if mode == .createNew { throw IOError(.fileExists, operation: operation, path: path) }
                if mode == .truncate && !files[existing]!.contents.isEmpty { files[existing]!.truncate(to: 0) }
                id = existing
            } else {
                if mode == .existing { throw IOError(.noSuchFile, operation: operation, path: path) }
                id = nextID
                nextID += 1
                files[id] = File()
                directories[parent]!.entries[name] = id
            }
            openCounts[id, default: 0] += 1
            return id
        }

        /// Forgets one open handle or held lock on `id`.
        mutating func release(_ id: NodeID) {
            let count = openCounts[id]! - 1
            openCounts[id] = count == 0 ? nil : count
            collectGarbageIfNeeded()
        }

        /// Creates the directory at `path` and any missing parents.
        mutating func createDirectory(at path: String) throws(IOError) {
            guard !path.isEmpty else { throw IOError(.noSuchFile, operation: "mkdir", path: path) }
            var directory = Self.rootID
            let names = Self.components(of: path)
            for (index, name) in names.enumerated() {
                if let child = directories[directory]!.entries[name] {
                    guard directories[child] != nil else {
                        // mkdir reports EEXIST for the directory it was asked for, ENOTDIR on the way.
                        let code: IOError.Code = index == names.count - 1 ? .fileExists : .notADirectory
                        throw IOError(code, operation: "mkdir", path: path)
                    }
                    directory = child
                } else {
                    let child = nextID
                    nextID += 1
                    directories[child] = Directory()
                    directories[directory]!.entries[name] = child
                    directory = child
                }
            }
        }

        /// Removes the name of the file at `path`.
        mutating func removeFile(at path: String) throws(IOError) {
            guard case .entry(let parent, let name) = try locate(path, operation: "unlink") else {
                throw IOError(.isADirectory, operation: "unlink", path: path)
            }
            guard let id = directories[parent]!.entries[name] else {
                throw IOError(.noSuchFile, operation: "unlink", path: path)
            }
            guard files[id] != nil else { throw IOError(.isADirectory, operation: "unlink", path: path) }
            directories[parent]!.entries[name] = nil
            collectGarbageIfNeeded()
        }

        /// Removes the name of the empty directory at `path`.
        mutating func removeDirectory(at path: String) throws(IOError) {
            guard case .entry(let parent, let name) = try locate(path, operation: "rmdir") else {
                throw IOError(.other(22), operation: "rmdir", path: path)
            }
            guard let id = directories[parent]!.entries[name] else {
                throw IOError(.noSuchFile, operation: "rmdir", path: path)
            }
            guard let directory = directories[id] else { throw IOError(.notADirectory, operation: "rmdir", path: path) }
            guard directory.entries.isEmpty else { throw IOError(.fileExists, operation: "rmdir", path: path) }
            directories[parent]!.entries[name] = nil
            collectGarbageIfNeeded()
        }

        /// Moves the file at `source` to `destination`, replacing any file there.
        mutating func rename(from source: String, to destination: String) throws(IOError) {
            guard case .entry(let sourceParent, let sourceName) = try locate(source, operation: "rename") else {
                throw IOError(.isADirectory, operation: "rename", path: source)
            }
            guard let id = directories[sourceParent]!.entries[sourceName] else {
                throw IOError(.noSuchFile, operation: "rename", path: source)
            }
            // A directory moves only to a new name outside itself (a migration swaps store directories).
            let isDirectory = files[id] == nil
            if isDirectory {
                let (from, to) = (Self.components(of: source), Self.components(of: destination))
                guard to.count <= from.count || Array(to.prefix(from.count)) != from else {
                    throw IOError(.other(22), operation: "rename", path: source)
                }
            }
            // POSIX reports destination trouble against the call too; the error names `source` like
            // PosixFileSystem's.
            let target: Location
            do {
                target = try locate(destination, operation: "rename")
            } catch {
                throw IOError(error.code, operation: "rename", path: source)
            }
            guard case .entry(let destinationParent, let destinationName) = target else {
                throw IOError(.isADirectory, operation: "rename", path: source)
            }
            if let replaced = directories[destinationParent]!.entries[destinationName] {
                if isDirectory { throw IOError(.fileExists, operation: "rename", path: source) }
                guard files[replaced] != nil else { throw IOError(.isADirectory, operation: "rename", path: source) }
                if replaced == id { return }  // Two names of one file: POSIX does nothing.
            }
            directories[sourceParent]!.entries[sourceName] = nil
            directories[destinationParent]!.entries[destinationName] = id
            collectGarbageIfNeeded()
        }

        /// Makes the entries of the directory at `path` durable.
        mutating func syncDirectory(at path: String) throws(IOError) {
            let id = try directory(at: path, operation: "fsync")
            directories[id]!.durableEntries = directories[id]!.entries
            collectGarbageIfNeeded()
        }

        /// Opens (creating if missing) the file at `path` and locks it, shared or exclusive.
        ///
        /// - Throws: `.wouldBlock` when a conflicting lock is held; the file stays created, as with
        ///   `open(O_CREAT)` followed by a failed `flock`.
        mutating func lockFile(at path: String, mode: FileLockMode) throws(IOError) -> NodeID {
            let id = try openFile(at: path, mode: .createIfMissing)
            do throws(IOError) { try acquireLock(on: id, mode: mode, path: path) } catch {
                release(id)
                throw error
            }
            return id
        }

        /// Releases one lock on `id` and forgets its open count.
        mutating func unlock(_ id: NodeID) {
            releaseLock(on: id)
            release(id)
        }

        /// Locks the file `id` through the open handle `handle`, converting the lock the handle holds (which is
        /// released first, as `flock` does).
        ///
        /// - Throws: `.wouldBlock` when a conflicting lock is held; the handle then holds none.
        mutating func lock(
            _ id: NodeID, handle: ObjectIdentifier, mode: FileLockMode, path: String
        ) throws(IOError) {
            if let held = handleLocks[handle] {
                if held == mode { return }
                handleLocks[handle] = nil
                releaseLock(on: id)
            }
            try acquireLock(on: id, mode: mode, path: path)
            handleLocks[handle] = mode
        }

        /// Releases the lock the open handle `handle` holds on the file `id`.
        /// - Returns: whether it held one.
        mutating func unlock(_ id: NodeID, handle: ObjectIdentifier) -> Bool {
            guard handleLocks.removeValue(forKey: handle) != nil else { return false }
            releaseLock(on: id)
            return true
        }

        /// Counts one more lock on `id`, or throws `.wouldBlock` when a conflicting one is held.
        private mutating func acquireLock(on id: NodeID, mode: FileLockMode, path: String) throws(IOError) {
            let held = locks[id] ?? 0
            switch mode {
            case .exclusive where held == 0: locks[id] = -1
            case .shared where held >= 0: locks[id] = held + 1
            default: throw IOError(.wouldBlock, operation: "flock", path: path)
            }
        }

        /// Counts one lock on `id` less.
        private mutating func releaseLock(on id: NodeID) {
            let held = locks[id] ?? 0
            locks[id] = held > 1 ? held - 1 : nil
        }

        /// Gives the file at `path` the contents `bytes`, current and durable, creating it (with a
        /// durable name) if needed.
        mutating func setContents(_ bytes: [UInt8], of path: String) throws(IOError) {
            guard case .entry(let parent, let name) = try locate(path, operation: "setContents") else {
                throw IOError(.isADirectory, operation: "setContents", path: path)
            }
            if let id = directories[parent]!.entries[name] {
                guard files[id] != nil else { throw IOError(.isADirectory, operation: "setContents", path: path) }
                files[id] = File(bytes: bytes)
                directories[parent]!.durableEntries[name] = id
            } else {
                let id = nextID
                nextID += 1
                files[id] = File(bytes: bytes)
                directories[parent]!.entries[name] = id
                directories[parent]!.durableEntries[name] = id
            }
        }

        // MARK: - Garbage collection

        /// Drops nodes that nothing can reach any more, once enough nodes have piled up.
        private mutating func collectGarbageIfNeeded() {
            guard files.count + directories.count >= collectionThreshold else { return }
            collectGarbage()
            collectionThreshold = max(64, 2 * (files.count + directories.count))
        }

        /// Drops every node that is neither open nor reachable from the root through current or
        /// durable entries (a removed file whose removal is not durable must still reappear after
        /// a crash).
        mutating func collectGarbage() {
            var live: Set<NodeID> = [Self.rootID]
            live.formUnion(openCounts.keys)
            var pending = [Self.rootID]
            while let id = pending.popLast() {
                guard let directory = directories[id] else { continue }
                for child in directory.entries.values where live.insert(child).inserted { pending.append(child) }
                for child in directory.durableEntries.values where live.insert(child).inserted {
                    pending.append(child)
                }
            }
            files = files.filter { live.contains($0.key) }
            directories = directories.filter { live.contains($0.key) }
        }

        // MARK: - Crash

        /// A new file system holding what survives power loss now, under `policy`.
        ///
        /// Walks the durable namespace from the root in name order (so that seeded policies are
        /// repeatable), giving every reachable file its surviving contents. A file reachable under
        /// two durable names (a rename synced in the new directory only) stays one file.
        func crashImage(policy: CrashPolicy) -> State {
            var image = State(recordsEvents: events != nil)
            var generator = policy.makeGenerator()
            var copies: [NodeID: NodeID] = [Self.rootID: Self.rootID]
            var pending = [Self.rootID]
            while let old = pending.popLast() {
                let oldEntries = directories[old]!.durableEntries
                var newEntries: [String: NodeID] = [:]
                for name in oldEntries.keys.sorted() {
                    let child = oldEntries[name]!
                    if let copy = copies[child] {
                        newEntries[name] = copy
                        continue
                    }
                    let copy = image.nextID
                    image.nextID += 1
                    copies[child] = copy
                    newEntries[name] = copy
                    if let file = files[child] {
                        image.files[copy] = File(bytes: policy.survivingContents(of: file, using: &generator))
                    } else {
                        image.directories[copy] = Directory()
                        pending.append(child)
                    }
                }
                let copy = copies[old]!
                image.directories[copy]!.entries = newEntries
                image.directories[copy]!.durableEntries = newEntries
            }
            return image
        }
    }
}
