#include "md5many.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/// Whether the CPU has AVX-512F.
static int has_avx512;

/// Probes the CPU once, when the library loads (before any thread can call in).
__attribute__((constructor)) static void probe(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    has_avx512 = __builtin_cpu_supports("avx512f");
#endif
}

int dk_md5_many_available(void) { return has_avx512; }

#if defined(__x86_64__)

/// RFC 1321's sine table: floor(|sin(i + 1)| * 2^32).
static const uint32_t sine[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};

/// The four round functions as `vpternlogd` truth tables over (b, c, d).
enum { F = 0xCA, G = 0xE4, H = 0x96, I = 0x39 };

/// One MD5 step on sixteen lanes: a = b + rotl(a + f(b, c, d) + sine[i] + word, s).
#define STEP(fn, a, b, c, d, i, word, s)                                                                     \
    a = _mm512_add_epi32(                                                                                    \
        a, _mm512_add_epi32(_mm512_ternarylogic_epi32(b, c, d, fn),                                          \
                            _mm512_add_epi32(word, _mm512_set1_epi32((int)sine[i]))));                      \
    a = _mm512_add_epi32(b, _mm512_rol_epi32(a, s))

/// Turns sixteen rows (one 64-byte block per lane) into sixteen columns (one message word per register).
__attribute__((target("avx512f"))) static inline void transpose(__m512i r[16]) {
    __m512i t[16], u[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    for (int g = 0; g < 16; g += 4) {
        u[g] = _mm512_unpacklo_epi64(t[g], t[g + 2]);
        u[g + 1] = _mm512_unpackhi_epi64(t[g], t[g + 2]);
        u[g + 2] = _mm512_unpacklo_epi64(t[g + 1], t[g + 3]);
        u[g + 3] = _mm512_unpackhi_epi64(t[g + 1], t[g + 3]);
    }
    // u[4g + c] holds, in 128-bit part k, word 4k + c of rows 4g ... 4g + 3.
    for (int c = 0; c < 4; c++) {
        __m512i v0 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x44);
        __m512i v1 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xEE);
        __m512i w0 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x44);
        __m512i w1 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xEE);
        r[c] = _mm512_shuffle_i32x4(v0, w0, 0x88);
        r[4 + c] = _mm512_shuffle_i32x4(v0, w0, 0xDD);
        r[8 + c] = _mm512_shuffle_i32x4(v1, w1, 0x88);
        r[12 + c] = _mm512_shuffle_i32x4(v1, w1, 0xDD);
    }
}

/// Runs `blocks` 64-byte blocks of each active lane through its state (`state[word][lane]`).
/// Lane `l` reads from `data[l]` when bit `l` of `active` is set; other lanes keep their state.
__attribute__((target("avx512f"))) static void
run_blocks(uint32_t state[4][16], const uint8_t *const data[16], size_t blocks, uint16_t active) {
    static const uint8_t idle[64];
    const uint8_t *p[16];
    size_t stride[16];
    for (int l = 0; l < 16; l++) {
        int on = (active >> l) & 1;
        p[l] = on ? data[l] : idle;
        stride[l] = on ? 64 : 0;
    }
    __m512i a = _mm512_loadu_si512(state[0]), b = _mm512_loadu_si512(state[1]);
    __m512i c = _mm512_loadu_si512(state[2]), d = _mm512_loadu_si512(state[3]);
    const __m512i a0 = a, b0 = b, c0 = c, d0 = d;
    for (size_t n = 0; n < blocks; n++) {
        __m512i m[16];
        for (int l = 0; l < 16; l++) {
            m[l] = _mm512_loadu_si512(p[l]);
            p[l] += stride[l];
        }
        transpose(m);
        const __m512i sa = a, sb = b, sc = c, sd = d;
        STEP(F, a, b, c, d, 0, m[0], 7);   STEP(F, d, a, b, c, 1, m[1], 12);
        STEP(F, c, d, a, b, 2, m[2], 17);  STEP(F, b, c, d, a, 3, m[3], 22);
        STEP(F, a, b, c, d, 4, m[4], 7);   STEP(F, d, a, b, c, 5, m[5], 12);
        STEP(F, c, d, a, b, 6, m[6], 17);  STEP(F, b, c, d, a, 7, m[7], 22);
        STEP(F, a, b, c, d, 8, m[8], 7);   STEP(F, d, a, b, c, 9, m[9], 12);
        STEP(F, c, d, a, b, 10, m[10], 17); STEP(F, b, c, d, a, 11, m[11], 22);
        STEP(F, a, b, c, d, 12, m[12], 7); STEP(F, d, a, b, c, 13, m[13], 12);
        STEP(F, c, d, a, b, 14, m[14], 17); STEP(F, b, c, d, a, 15, m[15], 22);

        STEP(G, a, b, c, d, 16, m[1], 5);  STEP(G, d, a, b, c, 17, m[6], 9);
        STEP(G, c, d, a, b, 18, m[11], 14); STEP(G, b, c, d, a, 19, m[0], 20);
        STEP(G, a, b, c, d, 20, m[5], 5);  STEP(G, d, a, b, c, 21, m[10], 9);
        STEP(G, c, d, a, b, 22, m[15], 14); STEP(G, b, c, d, a, 23, m[4], 20);
        STEP(G, a, b, c, d, 24, m[9], 5);  STEP(G, d, a, b, c, 25, m[14], 9);
        STEP(G, c, d, a, b, 26, m[3], 14); STEP(G, b, c, d, a, 27, m[8], 20);
        STEP(G, a, b, c, d, 28, m[13], 5); STEP(G, d, a, b, c, 29, m[2], 9);
        STEP(G, c, d, a, b, 30, m[7], 14); STEP(G, b, c, d, a, 31, m[12], 20);

        STEP(H, a, b, c, d, 32, m[5], 4);  STEP(H, d, a, b, c, 33, m[8], 11);
        STEP(H, c, d, a, b, 34, m[11], 16); STEP(H, b, c, d, a, 35, m[14], 23);
        STEP(H, a, b, c, d, 36, m[1], 4);  STEP(H, d, a, b, c, 37, m[4], 11);
        STEP(H, c, d, a, b, 38, m[7], 16); STEP(H, b, c, d, a, 39, m[10], 23);
        STEP(H, a, b, c, d, 40, m[13], 4); STEP(H, d, a, b, c, 41, m[0], 11);
        STEP(H, c, d, a, b, 42, m[3], 16); STEP(H, b, c, d, a, 43, m[6], 23);
        STEP(H, a, b, c, d, 44, m[9], 4);  STEP(H, d, a, b, c, 45, m[12], 11);
        STEP(H, c, d, a, b, 46, m[15], 16); STEP(H, b, c, d, a, 47, m[2], 23);

        STEP(I, a, b, c, d, 48, m[0], 6);  STEP(I, d, a, b, c, 49, m[7], 10);
        STEP(I, c, d, a, b, 50, m[14], 15); STEP(I, b, c, d, a, 51, m[5], 21);
        STEP(I, a, b, c, d, 52, m[12], 6); STEP(I, d, a, b, c, 53, m[3], 10);
        STEP(I, c, d, a, b, 54, m[10], 15); STEP(I, b, c, d, a, 55, m[1], 21);
        STEP(I, a, b, c, d, 56, m[8], 6);  STEP(I, d, a, b, c, 57, m[15], 10);
        STEP(I, c, d, a, b, 58, m[6], 15); STEP(I, b, c, d, a, 59, m[13], 21);
        STEP(I, a, b, c, d, 60, m[4], 6);  STEP(I, d, a, b, c, 61, m[11], 10);
        STEP(I, c, d, a, b, 62, m[2], 15); STEP(I, b, c, d, a, 63, m[9], 21);

        a = _mm512_add_epi32(a, sa);
        b = _mm512_add_epi32(b, sb);
        c = _mm512_add_epi32(c, sc);
        d = _mm512_add_epi32(d, sd);
    }
    _mm512_storeu_si512(state[0], _mm512_mask_mov_epi32(a0, active, a));
    _mm512_storeu_si512(state[1], _mm512_mask_mov_epi32(b0, active, b));
    _mm512_storeu_si512(state[2], _mm512_mask_mov_epi32(c0, active, c));
    _mm512_storeu_si512(state[3], _mm512_mask_mov_epi32(d0, active, d));
}

/// A message waiting for a lane: its length and its place in the caller's arrays.
struct pending {
    size_t length;
    size_t index;
};

/// Longest first.
static int longer_first(const void *x, const void *y) {
    size_t lx = ((const struct pending *)x)->length, ly = ((const struct pending *)y)->length;
    return lx < ly ? 1 : lx > ly ? -1 : 0;
}

/// What one lane is doing: the whole blocks of its message, then one or two padded final blocks.
struct lane {
    const uint8_t *next;
    size_t left;
    int in_tail;
    size_t index;
    uint8_t tail[128];
    size_t tail_blocks;
};

/// Gives `lane` a message: its state starts over and its final blocks are padded as RFC 1321 says.
static void start(struct lane *lane, uint32_t state[4][16], int l, const uint8_t *message, size_t length, size_t index) {
    state[0][l] = 0x67452301;
    state[1][l] = 0xefcdab89;
    state[2][l] = 0x98badcfe;
    state[3][l] = 0x10325476;
    size_t whole = length / 64, rest = length % 64;
    memset(lane->tail, 0, sizeof lane->tail);
    if (rest) memcpy(lane->tail, message + whole * 64, rest);
    lane->tail[rest] = 0x80;
    lane->tail_blocks = rest + 9 <= 64 ? 1 : 2;
    uint64_t bits = (uint64_t)length * 8;
    for (int k = 0; k < 8; k++) lane->tail[lane->tail_blocks * 64 - 8 + k] = (uint8_t)(bits >> (8 * k));
    lane->index = index;
    if (whole) {
        lane->next = message;
        lane->left = whole;
        lane->in_tail = 0;
    } else {
        lane->next = lane->tail;
        lane->left = lane->tail_blocks;
        lane->in_tail = 1;
    }
}

int dk_md5_many(const void *const *messages, const size_t *lengths, size_t count, uint8_t *digests) {
    if (!has_avx512) return 0;
    if (count == 0) return 1;
    struct pending *order = calloc(count, sizeof *order);
    struct lane *lanes = calloc(16, sizeof *lanes);
    if (!order || !lanes) {
        free(order);
        free(lanes);
        return 0;
    }
    for (size_t i = 0; i < count; i++) order[i] = (struct pending){lengths[i], i};
    qsort(order, count, sizeof *order, longer_first);

    uint32_t state[4][16];
    const uint8_t *data[16];
    uint16_t active = 0;
    size_t taken = 0;
    for (;;) {
        for (int l = 0; l < 16 && taken < count; l++) {
            if ((active >> l) & 1) continue;
            size_t index = order[taken++].index;
            start(&lanes[l], state, l, messages[index], lengths[index], index);
            active |= (uint16_t)(1u << l);
        }
        if (!active) break;
        size_t blocks = SIZE_MAX;
        for (int l = 0; l < 16; l++) {
            if ((active >> l) & 1 && lanes[l].left < blocks) blocks = lanes[l].left;
            data[l] = lanes[l].next;
        }
        run_blocks(state, data, blocks, active);
        for (int l = 0; l < 16; l++) {
            if (!((active >> l) & 1)) continue;
            struct lane *lane = &lanes[l];
            lane->next += blocks * 64;
            lane->left -= blocks;
            if (lane->left) continue;
            if (!lane->in_tail) {
                lane->next = lane->tail;
                lane->left = lane->tail_blocks;
                lane->in_tail = 1;
                continue;
            }
            uint8_t *digest = digests + 16 * lane->index;
            for (int w = 0; w < 4; w++) {
                for (int k = 0; k < 4; k++) digest[4 * w + k] = (uint8_t)(state[w][l] >> (8 * k));
            }
            active &= (uint16_t)~(1u << l);
        }
    }
    free(order);
    free(lanes);
    return 1;
}

#else

int dk_md5_many(const void *const *messages, const size_t *lengths, size_t count, uint8_t *digests) {
    (void)messages;
    (void)lengths;
    (void)count;
    (void)digests;
    return 0;
}

#endif
