#ifndef DUMPKIT_CRC32C_H
#define DUMPKIT_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/// Continues a CRC-32C (Castagnoli) over `count` bytes. `crc` is the running register: start with
/// 0xFFFFFFFF and invert the final value. Uses the SSE4.2 `crc32` instruction when the CPU has it.
uint32_t dk_crc32c_update(uint32_t crc, const void *bytes, size_t count);

/// The same without the instruction: slicing-by-8 tables (little-endian machines), for CPUs without SSE4.2.
uint32_t dk_crc32c_update_portable(uint32_t crc, const void *bytes, size_t count);

#endif
