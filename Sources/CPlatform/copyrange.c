#define _GNU_SOURCE
#include "copyrange.h"

#include <errno.h>
#include <unistd.h>

ssize_t dk_copy_file_range(int in, int out, size_t count) {
#if defined(__linux__)
    return copy_file_range(in, NULL, out, NULL, count, 0);
#else
    (void)in;
    (void)out;
    (void)count;
    errno = ENOSYS;
    return -1;
#endif
}
