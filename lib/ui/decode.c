/* SPDX-License-Identifier: Apache-2.0 */
/* Attribute values: UTF-8 repair and entity decoding, in place when possible.
 *
 * Most values need nothing: they stay where they are in the dump and only
 * get a NUL written over their closing quote. A value with entity or
 * numeric references is decoded in place, because every reference is at
 * least as long as what it stands for ("&#0;" -> U+FFFD is 4 -> 3 bytes).
 * Only a value with invalid UTF-8 can grow (one bad byte -> 3 bytes of
 * U+FFFD); it is written to the doc's arena instead. So a normal dump is
 * never copied, and a hostile one costs at most three times its size.
 *
 * NUL is not a character XML can carry and the API hands out C strings, so
 * a raw NUL byte, like "&#0;", becomes U+FFFD. Invalid sequences are
 * replaced per maximal subpart (one U+FFFD for each), as Unicode advises. */
#include "ui/ui_internal.h"

#include <string.h>

#include "core/internal.h"

/* 1 for bytes that need a closer look: NUL, '&', and non-ASCII. */
static inline int special(uint8_t c)
{
    return (uint8_t)(c - 1) >= 0x7f || c == '&';
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 with *bad set to
 * the length of the maximal ill-formed subpart to replace. */
static int utf8_seq(const uint8_t *s, size_t n, size_t *bad)
{
    uint8_t c = s[0], lo = 0x80, hi = 0xbf;
    int need;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        need = 1;
    else if (c == 0xe0)
        need = 2, lo = 0xa0;
    else if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef)
        need = 2;
    else if (c == 0xed)
        need = 2, hi = 0x9f; /* no UTF-16 surrogates */
    else if (c == 0xf0)
        need = 3, lo = 0x90;
    else if (c >= 0xf1 && c <= 0xf3)
        need = 3;
    else if (c == 0xf4)
        need = 3, hi = 0x8f; /* nothing past U+10FFFF */
    else {
        *bad = 1;
        return 0;
    }
    if (n < 2 || s[1] < lo || s[1] > hi) {
        *bad = 1;
        return 0;
    }
    for (int k = 2; k <= need; k++) {
        if ((size_t)k >= n || (s[k] & 0xc0) != 0x80) {
            *bad = (size_t)k;
            return 0;
        }
    }
    return need + 1;
}

static size_t put_cp(char *o, uint32_t cp)
{
    if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        cp = 0xfffd;
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | cp >> 12);
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | cp >> 18);
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* A reference at s[0] == '&': on success the code point and the bytes it
 * spans. Unknown names, missing ';' or digits leave the '&' as written.
 * Numbers past U+10FFFF (however many digits) give U+FFFD; the span is
 * bounded so a run of digits cannot make this quadratic. */
static int entity(const uint8_t *s, size_t n, uint32_t *cp, size_t *span)
{
    size_t lim = n < 40 ? n : 40;
    size_t i = 1;
    if (lim >= 2 && s[1] == '#') {
        int hex = 0, digits = 0;
        uint32_t v = 0;
        i = 2;
        if (i < lim && (s[i] == 'x' || s[i] == 'X'))
            hex = 1, i++;
        for (; i < lim; i++) {
            uint32_t d;
            uint8_t c = s[i];
            if (c >= '0' && c <= '9')
                d = c - '0';
            else if (hex && c >= 'a' && c <= 'f')
                d = c - 'a' + 10;
            else if (hex && c >= 'A' && c <= 'F')
                d = c - 'A' + 10;
            else
                break;
            v = v * (hex ? 16 : 10) + d;
            if (v > 0x110000)
                v = 0x110000; /* stays out of range, never wraps */
            digits++;
        }
        if (!digits || i >= lim || s[i] != ';')
            return 0;
        *cp = v;
        *span = i + 1;
        return 1;
    }
    static const struct { const char *name; size_t len; uint32_t cp; } named[] = {
        {"amp;", 4, '&'}, {"lt;", 3, '<'}, {"gt;", 3, '>'}, {"quot;", 5, '"'}, {"apos;", 5, '\''},
    };
    for (size_t k = 0; k < sizeof named / sizeof named[0]; k++) {
        if (n - 1 >= named[k].len && memcmp(s + 1, named[k].name, named[k].len) == 0) {
            *cp = named[k].cp;
            *span = named[k].len + 1;
            return 1;
        }
    }
    return 0;
}

/* Decode src[0..n) into dst; dst may equal src when the input is valid
 * UTF-8, since then no step writes more than it has read. */
static size_t decode_into(char *dst, const char *src, size_t n, int entities)
{
    const uint8_t *s = (const uint8_t *)src;
    size_t i = 0, o = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (!special(c)) {
            dst[o++] = (char)c;
            i++;
            continue;
        }
        if (c == '&') {
            uint32_t cp;
            size_t span;
            if (entities && entity(s + i, n - i, &cp, &span)) {
                o += put_cp(dst + o, cp);
                i += span;
            } else {
                dst[o++] = '&';
                i++;
            }
            continue;
        }
        if (c == 0) {
            o += put_cp(dst + o, 0xfffd);
            i++;
            continue;
        }
        size_t bad;
        int k = utf8_seq(s + i, n - i, &bad);
        if (k) {
            memmove(dst + o, s + i, (size_t)k);
            o += (size_t)k;
            i += (size_t)k;
        } else {
            o += put_cp(dst + o, 0xfffd);
            i += bad;
        }
    }
    return o;
}

int ui_decode_value(ui_doc *d, char *v, uint32_t n, int entities, ui_str *out)
{
    const uint8_t *s = (const uint8_t *)v;
    uint32_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* A word at a time while no byte is NUL, '&' or non-ASCII. */
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    while (n - i >= 8) {
        uint64_t w, a;
        memcpy(&w, s + i, 8);
        a = w ^ (ones * '&');
        if (((w - ones) & ~w & highs) | ((a - ones) & ~a & highs) | (w & highs))
            break;
        i += 8;
    }
#endif
    while (i < n && !special(s[i]))
        i++;
    uint32_t off = (uint32_t)(v - d->buf);
    if (i == n) {
        v[n] = '\0';
        *out = (ui_str){off, n};
        return 0;
    }
    /* Something to look at: is it only references, or broken UTF-8? */
    int amp = 0, broken = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (!special(c)) {
            i++;
        } else if (c == '&') {
            amp = 1;
            i++;
        } else if (c == 0) {
            broken = 1;
            break;
        } else {
            size_t bad;
            int k = utf8_seq(s + i, n - i, &bad);
            if (!k) {
                broken = 1;
                break;
            }
            i += (uint32_t)k;
        }
    }
    if (!broken) {
        uint32_t m = n;
        if (amp && entities)
            m = (uint32_t)decode_into(v, v, n, 1);
        v[m] = '\0';
        *out = (ui_str){off, m};
        return 0;
    }
    size_t need = (size_t)n * 3 + 1;
    if (d->len + d->arena_len + need > UINT32_MAX)
        return core_fail(ADBC_EFORMAT, "dump has too much invalid UTF-8 to repair: it is not a "
                                       "uiautomator dump");
    if (d->arena_len + need > d->arena_cap) {
        size_t cap = d->arena_cap ? d->arena_cap : 4096;
        while (cap < d->arena_len + need)
            cap *= 2;
        char *a = core_realloc(d->arena, cap);
        if (!a)
            return core_fail(ADBC_ENOMEM, "out of memory repairing a dump's text");
        d->arena = a;
        d->arena_cap = cap;
    }
    char *dst = d->arena + d->arena_len;
    size_t m = decode_into(dst, v, n, entities);
    dst[m] = '\0';
    *out = (ui_str){(uint32_t)(d->len + d->arena_len), (uint32_t)m};
    d->arena_len += m + 1;
    return 0;
}
