#define _GNU_SOURCE
#include "cfilestatus.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#if defined(__linux__)
#include <sys/sysmacros.h>
#endif

static int from_stat(int status, const struct stat *buffer, cfilestatus_result *result) {
    if (status != 0) return -1;
    result->device = (uint64_t)buffer->st_dev;
    result->inode = (uint64_t)buffer->st_ino;
    result->size = buffer->st_size < 0 ? 0 : (uint64_t)buffer->st_size;
    return 0;
}

#if defined(__linux__) && defined(STATX_INO)
/// `statx` asking for the inode and size only; `fstatat` where the kernel has no `statx` (before 4.11, or a filter).
static int status_at(int directory, const char *path, int flags, cfilestatus_result *result) {
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

int cfilestatus_path(const char *path, cfilestatus_result *result) {
    return status_at(AT_FDCWD, path, 0, result);
}

int cfilestatus_descriptor(int descriptor, cfilestatus_result *result) {
    return status_at(descriptor, "", AT_EMPTY_PATH, result);
}
#else
int cfilestatus_path(const char *path, cfilestatus_result *result) {
    struct stat buffer;
    return from_stat(stat(path, &buffer), &buffer, result);
}

int cfilestatus_descriptor(int descriptor, cfilestatus_result *result) {
    struct stat buffer;
    return from_stat(fstat(descriptor, &buffer), &buffer, result);
}
#endif
