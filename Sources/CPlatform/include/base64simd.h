#ifndef DUMPKIT_BASE64SIMD_H
#define DUMPKIT_BASE64SIMD_H

#include <stddef.h>
#include <stdint.h>

/// Decodes standard base64 without padding 64 characters at a time (AVX-512 VBMI), stopping before
/// the first block of 64 that holds a character outside the alphabet (`=` included).
///
/// Reads at most `count` characters at `text` and writes 48 bytes per block to `out`, nothing past
/// them. Returns how many characters were decoded: a multiple of 64, 0 when the CPU has no
/// AVX-512 VBMI. The caller decodes the rest (and finds any bad character) another way.
size_t dk_base64_decode_blocks(const uint8_t *text, size_t count, uint8_t *out);

#endif
