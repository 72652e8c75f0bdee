#ifndef DK_COPYRANGE_H
#define DK_COPYRANGE_H

#include <stddef.h>
#include <sys/types.h>

/// Linux `copy_file_range` from `in`'s position to `out`'s (which Glibc's Swift module does not
/// export): bytes go file to file in the kernel. Elsewhere -1 with errno ENOSYS, so callers fall
/// back to reads and writes.
ssize_t dk_copy_file_range(int in, int out, size_t count);

#endif
