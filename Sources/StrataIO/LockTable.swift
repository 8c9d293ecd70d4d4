/// Linux's table of file locks (`/proc/locks`), read to name the processes that hold a store open.
///
/// Each line reads `1: FLOCK  ADVISORY  READ 4711 08:01:1234567 0 EOF`: the lock's number, kind, mode, access,
/// the holder's process ID, the file as hexadecimal `major:minor` and decimal inode, and the locked range. Lines of
/// waiting locks (`1: -> FLOCK ...`) name processes that do not hold the lock, and are skipped.
struct LockTable {
    private let lines: [Substring]

    init(_ bytes: [UInt8]) {
        lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
    }

    /// The distinct process IDs holding a lock on the file with this device and inode, in ascending order.
    func holders(device: UInt64, inode: UInt64) -> [Int32] {
        let major = ((device >> 8) & 0xFFF) | ((device >> 32) & ~0xFFF)
        let minor = (device & 0xFF) | ((device >> 12) & ~0xFF)
        var found: Set<Int32> = []
        for line in lines {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] != "->" else { continue }
            let file = fields[5].split(separator: ":")
            guard file.count == 3, let pid = Int32(fields[4]),
                UInt64(file[0], radix: 16) == major, UInt64(file[1], radix: 16) == minor,
                UInt64(file[2]) == inode
            else { continue }
            found.insert(pid)
        }
        return found.sorted()
    }
}
