#define _GNU_SOURCE
#include "filelock.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

int dk_lock_byte(int fd, int64_t offset, int lock) {
#if defined(F_OFD_SETLKW)
    struct flock range;
    memset(&range, 0, sizeof range);
    range.l_type = lock ? F_WRLCK : F_UNLCK;
    range.l_whence = SEEK_SET;
    range.l_start = offset;
    range.l_len = 1;
    int status;
    do {
        status = fcntl(fd, F_OFD_SETLKW, &range);
    } while (status != 0 && errno == EINTR);
    return status;
#else
    (void)fd;
    (void)offset;
    (void)lock;
    errno = EINVAL;
    return -1;
#endif
}
