#ifndef DUMPKIT_FILELOCK_H
#define DUMPKIT_FILELOCK_H

#include <stdint.h>

/// Takes (`lock` non-zero, waiting for it) or releases (`lock` zero) an exclusive lock on the byte at
/// `offset` of `fd` (Linux open-file-description locks, `F_OFD_SETLKW`). The lock belongs to the open
/// file, not to the process: two descriptors from two `open` calls exclude each other, even in one
/// process. Returns 0, or -1 with `errno` set (`EINVAL` where the system has no such locks).
int dk_lock_byte(int fd, int64_t offset, int lock);

#endif
