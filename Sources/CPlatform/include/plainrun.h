#ifndef DUMPKIT_PLAINRUN_H
#define DUMPKIT_PLAINRUN_H

#include <stddef.h>
#include <stdint.h>

/// How many of the `count` bytes at `bytes` are, from the start, printable ASCII other than a quote
/// or a backslash (the plain content of a JSON string), looked at 64 bytes at a time (AVX-512 BW).
///
/// Only whole blocks of 64 are read: the result is the place of the first other byte, or the end
/// of the last whole block. 0 when the CPU has no AVX-512 BW (the caller looks another way).
size_t dk_plain_ascii_prefix(const uint8_t *bytes, size_t count);

#endif
