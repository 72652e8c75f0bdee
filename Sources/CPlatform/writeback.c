#define _GNU_SOURCE
#include "writeback.h"

#include <fcntl.h>
#include <unistd.h>

int dk_start_writeback(int fd, int64_t offset, int64_t count) {
#if defined(__linux__)
    return sync_file_range(fd, offset, count, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd;
    (void)offset;
    (void)count;
    return 0;
#endif
}

int dk_sync_file_system(int fd) {
#if defined(__linux__)
    return syncfs(fd);
#else
    (void)fd;
    sync();
    return 0;
#endif
}
