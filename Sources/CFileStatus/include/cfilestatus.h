#ifndef CFILESTATUS_H
#define CFILESTATUS_H

#include <stdint.h>

/// A file's device, inode and size.
typedef struct {
    uint64_t device;
    uint64_t inode;
    uint64_t size;
} cfilestatus_result;

/// The status of the file at `path` (symbolic links followed), asking the kernel for its inode and size only: 0, or
/// -1 with `errno` set.
///
/// Not `stat`: since Linux 6.13, reading a file's timestamps makes its next change take a fine-grained timestamp
/// (multigrain timestamps), so a `stat` before each write dirties the inode at every write, and each `fdatasync` after
/// it cost about a third more on ext4 (W2's durable commits). `statx` with a mask without timestamps does not.
int cfilestatus_path(const char *path, cfilestatus_result *result);

/// The status of the open file `descriptor`, as ``cfilestatus_path``.
int cfilestatus_descriptor(int descriptor, cfilestatus_result *result);

#endif
