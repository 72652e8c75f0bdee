#include "plainrun.h"

#if defined(__x86_64__)
#include <immintrin.h>

/// The plain prefix, 64 bytes a step: a mask of the bytes that end it, and the first one's place.
__attribute__((target("avx512f,avx512bw"))) static size_t prefix(const uint8_t *bytes, size_t count) {
    const __m512i space = _mm512_set1_epi8(0x20), quote = _mm512_set1_epi8('"'), backslash = _mm512_set1_epi8('\\');
    size_t i = 0;
    while (i + 64 <= count) {
        const __m512i v = _mm512_loadu_si512(bytes + i);
        // Below 0x20 (unsigned compare) or from 0x80 up (the sign bit), a quote, a backslash.
        const __mmask64 special = _mm512_cmplt_epu8_mask(v, space) | _mm512_movepi8_mask(v) |
                                  _mm512_cmpeq_epi8_mask(v, quote) | _mm512_cmpeq_epi8_mask(v, backslash);
        if (special != 0) return i + (size_t)__builtin_ctzll(special);
        i += 64;
    }
    return i;
}

#endif

size_t dk_plain_ascii_prefix(const uint8_t *bytes, size_t count) {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512bw")) return prefix(bytes, count);
#endif
    (void)bytes;
    (void)count;
    return 0;
}
