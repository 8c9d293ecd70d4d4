import Foundation

/// Directories on the real file system for one input: under /dev/shm when it exists (memory, no disk, and
/// `fsync` costs nothing), else the temporary directory. Each name holds the process ID and a counter, so that
/// parallel fuzzing jobs (`-jobs`, `-fork`) never share one; the harness removes it at the end of the input.
enum ScratchDirectory {
    nonisolated(unsafe) static var counter = 0

    /// A new path (not created) named after `purpose`.
    static func path(_ purpose: String) -> String {
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        counter += 1
        return "\(base)/strata-fuzz-\(purpose)-\(getpid())-\(counter)"
    }

    /// Removes `path` and everything in it.
    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }
}
