#ifndef CSYSTEMCALLS_H
#define CSYSTEMCALLS_H

#include <stdint.h>

// Linux calls that Glibc's Swift module does not export (they need _GNU_SOURCE), each with a portable fallback.

/// A file's device, inode and size.
typedef struct {
    uint64_t device;
    uint64_t inode;
    uint64_t size;
} csystemcalls_file_status;

/// The status of the file at `path` (symbolic links followed), asking the kernel for its inode and size only: 0, or
/// -1 with `errno` set.
///
/// Not `stat`: since Linux 6.13, reading a file's timestamps makes its next change take a fine-grained timestamp
/// (multigrain timestamps), so a `stat` before each write dirties the inode at every write, and each `fdatasync` after
/// it cost about a third more on ext4 (W2's durable commits). `statx` with a mask without timestamps does not.
int csystemcalls_file_status_path(const char *path, csystemcalls_file_status *result);

/// The status of the open file `descriptor`, as ``csystemcalls_file_status_path``.
int csystemcalls_file_status_descriptor(int descriptor, csystemcalls_file_status *result);

/// Asks the kernel to start writing `length` bytes of `descriptor` from `offset` to the disk, without waiting
/// (`sync_file_range` with `SYNC_FILE_RANGE_WRITE`; nothing off Linux). A hint: it makes nothing durable, but the
/// `fdatasync` that follows finds the pages written or on their way. A checkpoint that wrote 43 MB and then synced
/// waited 21 ms in the sync; started as each megabyte is written, the writes overlap the encoding of the next pages
/// and the sync waits 0.5 ms (C probe on this project's test machine).
void csystemcalls_start_writeback(int descriptor, uint64_t offset, uint64_t length);

#endif
