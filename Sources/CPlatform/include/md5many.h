#ifndef DUMPKIT_MD5MANY_H
#define DUMPKIT_MD5MANY_H

#include <stddef.h>
#include <stdint.h>

/// Whether `dk_md5_many` can run here (the CPU has AVX-512F).
int dk_md5_many_available(void);

/// MD5 of `count` messages at once: sixteen at a time, one per 32-bit lane of AVX-512 registers.
///
/// Message `i` is `lengths[i]` bytes at `messages[i]`; its 16-byte digest goes to `digests + 16 * i`.
/// Longer messages start first and a lane takes the next message as soon as its own is done, so the
/// lanes stay busy until the last few messages. Returns 1, or 0 without touching `digests` when
/// `dk_md5_many_available()` is 0 or memory for the schedule cannot be had.
int dk_md5_many(const void *const *messages, const size_t *lengths, size_t count, uint8_t *digests);

#endif
