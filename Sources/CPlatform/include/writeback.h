#ifndef DUMPKIT_WRITEBACK_H
#define DUMPKIT_WRITEBACK_H

#include <stdint.h>

/// Asks the kernel to start writing `count` bytes at `offset` of `fd` to disk without waiting
/// (Linux `sync_file_range` with `SYNC_FILE_RANGE_WRITE`), so that a later `fsync` has little left to do.
/// Returns 0, or -1 with `errno` set; elsewhere than Linux it does nothing and returns 0.
int dk_start_writeback(int fd, int64_t offset, int64_t count);

/// Writes everything of the file system holding `fd` to disk and waits for it (Linux `syncfs`): the
/// data, the new names and the folders of every file written there. Returns 0, or -1 with `errno`
/// set; elsewhere than Linux, `sync()` and 0.
int dk_sync_file_system(int fd);

#endif
