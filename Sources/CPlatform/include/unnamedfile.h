#ifndef DUMPKIT_UNNAMEDFILE_H
#define DUMPKIT_UNNAMEDFILE_H

#include <sys/types.h>

/// Opens a new file without a name in the folder `dirfd` for writing (Linux `O_TMPFILE`): it
/// disappears with its last descriptor unless `dk_link_unnamed` gives it a name, so a process killed
/// while writing leaves nothing behind. Returns the descriptor, or -1 with `errno` set (`EOPNOTSUPP`,
/// `EISDIR` or `EINVAL` where the file system or system has no such files).
int dk_open_unnamed(int dirfd, mode_t mode);

/// Gives the unnamed file `fd` the name `name` in the folder `dirfd`; fails with `EEXIST` when the
/// name is taken (nothing is replaced). Returns 0, or -1 with `errno` set.
int dk_link_unnamed(int fd, int dirfd, const char *name);

/// Opens `path` below the folder `dirfd` in one call, refusing symbolic links and `..` on the way
/// (Linux `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`). Returns the descriptor, or -1
/// with `errno` set; `ENOSYS` where the system has no `openat2`.
int dk_open_beneath(int dirfd, const char *path, int flags);

#endif
