/* SPDX-License-Identifier: Apache-2.0 */
/* A small 64-bit hash for recognition tokens, snapshot ids and dedup.
 *
 * Tokens are written to ref files and compared across processes, so the
 * hash reads input as little-endian words and never depends on the host:
 * the same bytes give the same value everywhere. Every call mixes in the
 * length, so chained fields ("ab","c" vs "a","bc") do not collide. */
#include "ui/ui_internal.h"

#include "core/internal.h"

#define K1 0x9e3779b97f4a7c15ull
#define K2 0xc2b2ae3d27d4eb4full

static uint64_t rotl(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static uint64_t finish(uint64_t h)
{
    h ^= h >> 31;
    h *= 0x7fb5d329728ea185ull;
    h ^= h >> 27;
    h *= 0x81dadef4bc2dd44dull;
    h ^= h >> 33;
    return h;
}

uint64_t ui_hash(uint64_t h, const void *p, size_t n)
{
    const uint8_t *s = p;
    h = (h ^ (uint64_t)n) * K1;
    while (n >= 8) {
        h ^= core_rd64(s) * K2;
        h = rotl(h, 29) * K1;
        s += 8;
        n -= 8;
    }
    if (n) {
        uint64_t w = 0;
        for (size_t i = 0; i < n; i++)
            w |= (uint64_t)s[i] << (8 * i);
        h ^= w * K2;
        h = rotl(h, 29) * K1;
    }
    return finish(h);
}

uint64_t ui_hash_u64(uint64_t h, uint64_t v)
{
    uint8_t b[8];
    core_wr64(b, v);
    return ui_hash(h, b, 8);
}
