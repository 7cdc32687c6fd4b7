/* SPDX-License-Identifier: Apache-2.0 */
/* A small PNG decoder for the act tests: chunk walk with CRC checks, zlib
 * inflate, and reversal of all five filter types, for 8-bit RGB and RGBA.
 * Written independently of lib/act/png.c so a test compares the encoder
 * with a separate reading of the format. */
#ifndef TEST_ACT_PNG_H
#define TEST_ACT_PNG_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static inline uint32_t tpng_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline int tpng_paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    if (pa <= pb && pa <= pc)
        return a;
    return pb <= pc ? b : c;
}

/* Decode png into *pix (malloc'd, rows of w*chans bytes). Returns 0, or a
 * negative number naming the step that failed. */
static inline int tpng_decode(const uint8_t *png, size_t len, uint32_t *w, uint32_t *h, int *chans,
                       uint8_t **pix)
{
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    *pix = NULL;
    if (len < 8 || memcmp(png, sig, 8) != 0)
        return -1;
    size_t off = 8;
    uint8_t *z = NULL;
    size_t zlen = 0;
    int have_ihdr = 0, have_iend = 0, ct = 0;
    while (off + 12 <= len) {
        uint32_t cl = tpng_be32(png + off);
        if (cl > len - off - 12) {
            free(z);
            return -2;
        }
        const uint8_t *type = png + off + 4, *data = png + off + 8;
        uint32_t crc = (uint32_t)crc32(0, type, cl + 4);
        if (crc != tpng_be32(data + cl)) {
            free(z);
            return -3;
        }
        if (memcmp(type, "IHDR", 4) == 0) {
            if (cl != 13 || have_ihdr)
                return -4;
            *w = tpng_be32(data);
            *h = tpng_be32(data + 4);
            if (data[8] != 8 || data[10] || data[11] || data[12])
                return -5;
            ct = data[9];
            if (ct != 2 && ct != 6)
                return -6;
            have_ihdr = 1;
        } else if (memcmp(type, "IDAT", 4) == 0) {
            uint8_t *nz = realloc(z, zlen + cl + 1);
            if (!nz) {
                free(z);
                return -7;
            }
            z = nz;
            memcpy(z + zlen, data, cl);
            zlen += cl;
        } else if (memcmp(type, "IEND", 4) == 0) {
            have_iend = 1;
            off += 12 + cl;
            break;
        }
        off += 12 + cl;
    }
    if (!have_ihdr || !have_iend || off != len || !z) {
        free(z);
        return -8;
    }
    int n = ct == 6 ? 4 : 3;
    size_t stride = (size_t)*w * n;
    size_t rawlen = (stride + 1) * *h;
    uint8_t *raw = malloc(rawlen + 1);
    uLongf got = (uLongf)rawlen + 1;
    if (!raw || uncompress(raw, &got, z, (uLong)zlen) != Z_OK || got != rawlen) {
        free(z);
        free(raw);
        return -9;
    }
    free(z);
    uint8_t *out = malloc(stride * *h + 1);
    if (!out) {
        free(raw);
        return -10;
    }
    for (uint32_t y = 0; y < *h; y++) {
        const uint8_t *line = raw + y * (stride + 1);
        uint8_t *cur = out + y * stride;
        const uint8_t *up = y ? cur - stride : NULL;
        int f = line[0];
        for (size_t i = 0; i < stride; i++) {
            int a = i >= (size_t)n ? cur[i - n] : 0;
            int b = up ? up[i] : 0;
            int c = up && i >= (size_t)n ? up[i - n] : 0;
            int x = line[1 + i];
            switch (f) {
            case 0: break;
            case 1: x += a; break;
            case 2: x += b; break;
            case 3: x += (a + b) / 2; break;
            case 4: x += tpng_paeth(a, b, c); break;
            default: free(raw); free(out); return -11;
            }
            cur[i] = (uint8_t)x;
        }
    }
    free(raw);
    *chans = n;
    *pix = out;
    return 0;
}

#endif
