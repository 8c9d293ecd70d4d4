#define _GNU_SOURCE
#include "csystemcalls.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#if defined(__linux__)
#include <sys/sysmacros.h>
#endif

static int from_stat(int status, const struct stat *buffer, csystemcalls_file_status *result) {
    if (status != 0) return -1;
    result->device = (uint64_t)buffer->st_dev;
    result->inode = (uint64_t)buffer->st_ino;
    result->size = buffer->st_size < 0 ? 0 : (uint64_t)buffer->st_size;
    return 0;
}

#if defined(__linux__) && defined(STATX_INO)
/// `statx` asking for the inode and size only; `fstatat` where the kernel has no `statx` (before 4.11, or a filter).
static int status_at(int directory, const char *path, int flags, csystemcalls_file_status *result) {
    struct statx extended;
    if (statx(directory, path, flags, STATX_INO | STATX_SIZE, &extended) == 0) {
        // makedev: the encoding `st_dev` has, so that identities from either call compare equal.
        result->device = (uint64_t)makedev(extended.stx_dev_major, extended.stx_dev_minor);
        result->inode = extended.stx_ino;
        result->size = extended.stx_size;
        return 0;
    }
    if (errno != ENOSYS) return -1;
    struct stat buffer;
    return from_stat(fstatat(directory, path, &buffer, flags), &buffer, result);
}

int csystemcalls_file_status_path(const char *path, csystemcalls_file_status *result) {
    return status_at(AT_FDCWD, path, 0, result);
}

int csystemcalls_file_status_descriptor(int descriptor, csystemcalls_file_status *result) {
    return status_at(descriptor, "", AT_EMPTY_PATH, result);
}
#else
int csystemcalls_file_status_path(const char *path, csystemcalls_file_status *result) {
    struct stat buffer;
    return from_stat(stat(path, &buffer), &buffer, result);
}

int csystemcalls_file_status_descriptor(int descriptor, csystemcalls_file_status *result) {
    struct stat buffer;
    return from_stat(fstat(descriptor, &buffer), &buffer, result);
}
#endif

void csystemcalls_start_writeback(int descriptor, uint64_t offset, uint64_t length) {
#if defined(__linux__)
    (void)sync_file_range(descriptor, (off64_t)offset, (off64_t)length, SYNC_FILE_RANGE_WRITE);
#else
    (void)descriptor;
    (void)offset;
    (void)length;
#endif
}
