/* SPDX-License-Identifier: Apache-2.0 */
/* Base64 for public key lines. Our own strict decoder rather than
 * EVP_DecodeBlock: that one skips whitespace, ignores padding mistakes and
 * reports a length rounded up to whole groups, and a key line from a device
 * or a file is untrusted input that must decode exactly or not at all. */
#include "auth/auth_internal.h"

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t b64_encoded_len(size_t n)
{
    return (n + 2) / 3 * 4;
}

void b64_encode(const uint8_t *in, size_t n, char *out)
{
    size_t i = 0;
    while (n - i >= 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        *out++ = alphabet[v >> 18];
        *out++ = alphabet[(v >> 12) & 63];
        *out++ = alphabet[(v >> 6) & 63];
        *out++ = alphabet[v & 63];
        i += 3;
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)in[i] << 16;
        *out++ = alphabet[v >> 18];
        *out++ = alphabet[(v >> 12) & 63];
        *out++ = '=';
        *out++ = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
        *out++ = alphabet[v >> 18];
        *out++ = alphabet[(v >> 12) & 63];
        *out++ = alphabet[(v >> 6) & 63];
        *out++ = '=';
    }
    *out = '\0';
}

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

long b64_decode(const char *in, size_t n, uint8_t *out, size_t out_size)
{
    if (n % 4 != 0)
        return -1;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 4) {
        int last = i + 4 == n;
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; k++) {
            unsigned char c = (unsigned char)in[i + k];
            if (c == '=' && last && k >= 2) {
                v[k] = 0;
                pad++;
                continue;
            }
            if (pad) /* data after padding: "A=B=" */
                return -1;
            v[k] = b64_value(c);
            if (v[k] < 0)
                return -1;
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        size_t take = 3 - (size_t)pad;
        /* Canonical form only: the bits that padding drops must be zero. */
        if ((pad == 1 && (w & 0xff)) || (pad == 2 && (w & 0xffff)))
            return -1;
        if (o + take > out_size)
            return -1;
        out[o++] = (uint8_t)(w >> 16);
        if (take > 1)
            out[o++] = (uint8_t)(w >> 8);
        if (take > 2)
            out[o++] = (uint8_t)w;
    }
    return (long)o;
}
