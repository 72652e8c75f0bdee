#include "base64simd.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/// Whether the CPU has AVX-512 VBMI (byte permutes across a whole register) and BW.
static int has_vbmi;
/// The 6-bit value of each ASCII character, 0x80 for those outside the alphabet.
static uint8_t values_of[128];
/// Where output byte `j` of a block is in the decoded register (the first 48 bytes matter).
static uint8_t byte_order[64];

/// Probes the CPU and fills the tables once, when the library loads (before any thread can call in).
__attribute__((constructor)) static void probe(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    has_vbmi = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw");
#endif
    for (int i = 0; i < 128; i++) values_of[i] = 0x80;
    for (int i = 0; i < 26; i++) {
        values_of['A' + i] = (uint8_t)i;
        values_of['a' + i] = (uint8_t)(26 + i);
    }
    for (int i = 0; i < 10; i++) values_of['0' + i] = (uint8_t)(52 + i);
    values_of['+'] = 62;
    values_of['/'] = 63;
    // Lane k holds output bytes 3k, 3k + 1, 3k + 2 as its bytes 2, 1, 0 (little-endian).
    for (int j = 0; j < 64; j++) byte_order[j] = j < 48 ? (uint8_t)(j / 3 * 4 + 2 - j % 3) : 0;
}

#if defined(__x86_64__)

/// Each 64-character block: the 6-bit value of every character from a 128-entry table (0x80 for
/// characters outside the alphabet, and for bytes of 0x80 and up through their own top bit), then
/// pairs merged into 12 bits, pairs of those into 24, and the three bytes of each 32-bit lane put
/// in order.
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static size_t decode_blocks(const uint8_t *text, size_t count,
                                                                                   uint8_t *out) {
    const __m512i lo = _mm512_loadu_si512(values_of), hi = _mm512_loadu_si512(values_of + 64);
    const __m512i pack = _mm512_loadu_si512(byte_order);
    const __m512i pairs = _mm512_set1_epi32(0x01400140), quads = _mm512_set1_epi32(0x00011000);
    const __mmask64 first48 = 0x0000FFFFFFFFFFFFull;
    size_t done = 0;
    while (done + 64 <= count) {
        const __m512i chars = _mm512_loadu_si512(text + done);
        const __m512i values = _mm512_permutex2var_epi8(lo, chars, hi);
        if (_mm512_movepi8_mask(_mm512_or_si512(values, chars)) != 0) break;
        const __m512i merged = _mm512_madd_epi16(_mm512_maddubs_epi16(values, pairs), quads);
        _mm512_mask_storeu_epi8(out + done / 4 * 3, first48, _mm512_permutexvar_epi8(pack, merged));
        done += 64;
    }
    return done;
}

#endif

size_t dk_base64_decode_blocks(const uint8_t *text, size_t count, uint8_t *out) {
#if defined(__x86_64__)
    if (has_vbmi) return decode_blocks(text, count, out);
#endif
    (void)text;
    (void)count;
    (void)out;
    return 0;
}
