#include "crc32c.h"

#include <string.h>

/// Slicing-by-8 tables for the reflected polynomial 0x82F63B78.
static uint32_t tables[8][256];
/// Whether the CPU has the SSE4.2 `crc32` instruction.
static int has_sse42;

/// Builds the tables and probes the CPU once, when the library loads (before any thread can call in).
__attribute__((constructor)) static void setup(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        tables[0][i] = c;
    }
    for (int i = 0; i < 256; i++) {
        for (int k = 1; k < 8; k++) tables[k][i] = (tables[k - 1][i] >> 8) ^ tables[0][tables[k - 1][i] & 0xFF];
    }
#if defined(__x86_64__)
    __builtin_cpu_init();
    has_sse42 = __builtin_cpu_supports("sse4.2");
#endif
}

uint32_t dk_crc32c_update_portable(uint32_t crc, const void *bytes, size_t count) {
    const uint8_t *p = bytes;
    size_t n = count;
    while (n >= 8) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + 4, 4);
        lo ^= crc;
        crc = tables[7][lo & 0xFF] ^ tables[6][(lo >> 8) & 0xFF] ^ tables[5][(lo >> 16) & 0xFF] ^ tables[4][lo >> 24]
            ^ tables[3][hi & 0xFF] ^ tables[2][(hi >> 8) & 0xFF] ^ tables[1][(hi >> 16) & 0xFF] ^ tables[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--) crc = tables[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__)
/// The SSE4.2 path: the `crc32` instruction, eight bytes at a time.
__attribute__((target("sse4.2"))) static uint32_t update_sse42(uint32_t crc, const uint8_t *p, size_t n) {
    uint64_t c = crc;
    while (n >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __builtin_ia32_crc32di(c, word);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (n--) c32 = __builtin_ia32_crc32qi(c32, *p++);
    return c32;
}
#endif

uint32_t dk_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
#if defined(__x86_64__)
    if (has_sse42) return update_sse42(crc, bytes, count);
#endif
    return dk_crc32c_update_portable(crc, bytes, count);
}
