#define _GNU_SOURCE
#include "unnamedfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/syscall.h>
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define DK_HAS_OPENAT2 1
#endif
#endif

int dk_open_unnamed(int dirfd, mode_t mode) {
#if defined(__linux__) && defined(O_TMPFILE)
    return openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
#else
    (void)dirfd;
    (void)mode;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

int dk_link_unnamed(int fd, int dirfd, const char *name) {
#if defined(__linux__)
    if (linkat(fd, "", dirfd, name, AT_EMPTY_PATH) == 0) return 0;
    // Without CAP_DAC_READ_SEARCH (before Linux 6.10) AT_EMPTY_PATH is refused: go through /proc.
    if (errno != ENOENT && errno != EPERM) return -1;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, path, dirfd, name, AT_SYMLINK_FOLLOW);
#else
    (void)fd;
    (void)dirfd;
    (void)name;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

int dk_open_beneath(int dirfd, const char *path, int flags) {
#if defined(DK_HAS_OPENAT2) && defined(SYS_openat2)
    struct open_how how = {0};
    how.flags = (unsigned long long)(flags | O_CLOEXEC);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
#else
    (void)dirfd;
    (void)path;
    (void)flags;
    errno = ENOSYS;
    return -1;
#endif
}
